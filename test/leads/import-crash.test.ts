import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { csv } from '../support/leads';
import { waitFor } from '../support/worker';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

// A worker process is SIGKILLed twice in the middle of an import. The import resumes after
// its last committed batch: every lead exists once, every event was emitted once.
const UNIQUE = 2900;
const REPEATS = 100;
let ctx: TestContext;
let worker: WorkerProcess | null = null;

const startWorker = (): Promise<WorkerProcess> =>
  startWorkerProcess(ctx.config, { TEST_IMPORT_BATCH_SIZE: '50' });

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await worker?.kill();
  await ctx?.close();
});

it('resumes after SIGKILL without creating or emitting anything twice', async () => {
  const { auth, tenantId } = await ctx.tenant(['write']);
  const phone = (i: number) => `+1718555${String(i).padStart(4, '0')}`;
  const rows = [['name', 'phone']];
  for (let i = 0; i < UNIQUE; i++) rows.push([`Lead ${i}`, phone(i)]);
  // The last rows repeat the first phones with new names: duplicates many batches later.
  for (let i = 0; i < REPEATS; i++) rows.push([`Lead ${i} renamed`, phone(i)]);
  const res = await request(ctx.app)
    .post('/api/v1/leads/import')
    .set('Authorization', auth)
    .set('Content-Type', 'text/csv')
    .send(csv(rows));
  expect(res.status).toBe(202);
  const id = res.body.id as string;
  const progress = async () =>
    (await ctx.deps.knex('lead_imports').where({ id }).first()) as {
      processed_rows: number;
      status: string;
    };

  worker = await startWorker();
  for (const threshold of [600, 1800]) {
    await waitFor(
      `${threshold} rows processed`,
      async () => (await progress()).processed_rows >= threshold,
      {
        timeoutMs: 60_000,
        intervalMs: 10,
      },
    );
    await worker.kill();
    const at = await progress();
    expect(at.status).toBe('processing');
    expect(at.processed_rows).toBeLessThan(UNIQUE + REPEATS);
    worker = await startWorker();
  }
  await waitFor('the import completed', async () => (await progress()).status === 'completed', {
    timeoutMs: 90_000,
    intervalMs: 100,
  });

  const done = (
    await request(ctx.app).get(`/api/v1/leads/imports/${id}`).set('Authorization', auth)
  ).body;
  expect(done).toMatchObject({
    total_rows: UNIQUE + REPEATS,
    processed_rows: UNIQUE + REPEATS,
    created: UNIQUE,
    updated: 0,
    duplicates: REPEATS,
    skipped: 0,
  });
  const leads = await ctx.deps
    .knex('leads')
    .where({ tenant_id: tenantId })
    .select('id', 'name', 'phone');
  expect(leads).toHaveLength(UNIQUE);
  expect(leads.find((l) => l.phone === phone(7))?.name).toBe('Lead 7 renamed');
  const events = await ctx.deps.stores.events.listForTenant(tenantId);
  const created = events.filter((e) => e.type === 'lead.created').map((e) => e.data.lead_id);
  expect(created).toHaveLength(UNIQUE);
  expect(new Set(created)).toEqual(new Set(leads.map((l) => l.id)));
  const updated = events.filter((e) => e.type === 'lead.updated');
  expect(updated).toHaveLength(REPEATS);
  expect(new Set(updated.map((e) => e.data.lead_id)).size).toBe(REPEATS);
}, 240_000);
