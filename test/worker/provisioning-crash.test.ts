import request from 'supertest';
import { simulatedNumber } from '../../apps/worker/src/provisioning';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/worker';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

// A worker SIGKILLed in the middle of provisioning, twice: once while it buys the number,
// once after the number was recorded and while it creates the assistant. The receptionist
// still ends ready, with the one number its key buys, and one receptionist.ready.
let ctx: TestContext;
let worker: WorkerProcess | null = null;

const startWorker = (): Promise<WorkerProcess> =>
  startWorkerProcess(ctx.config, {
    // About 5 s per receptionist (3 s for the number, 2 s for the assistant): room to kill,
    // since each kill follows its signal within one 25 ms poll. At 1 s for the assistant a
    // loaded machine once let the attempt finish before the kill.
    SIMULATOR_SPEED: '0.2',
    // Twice an attempt: a killed attempt's claim lapses this long after it was taken, and
    // the attempt that completes (2 s of assistant) ends well within it.
    TEST_PROVISIONING_LEASE_MS: '10000',
  });

interface Row {
  status: string;
  provisioning_attempts: number;
  purchased_number: string | null;
  phone_number: string | null;
}
const row = async (id: string) =>
  (await ctx.deps.knex('receptionists').where({ id }).first()) as Row;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await worker?.kill();
  await ctx?.close();
});

it('ends ready with one number after two SIGKILLs mid-provisioning', async () => {
  const { auth, tenantId } = await ctx.tenant(['write']);
  worker = await startWorker();
  const res = await request(ctx.app)
    .post('/api/v1/receptionists')
    .set('Authorization', auth)
    .send({ name: 'Front Desk', area_code: '512' });
  expect(res.status).toBe(202);
  const id = res.body.id as string;

  // 1. Killed while buying: attempt 1 claimed, nothing recorded yet.
  await waitFor('attempt 1 claimed', async () => (await row(id)).provisioning_attempts === 1);
  await worker.kill();
  expect(await row(id)).toMatchObject({ status: 'provisioning', purchased_number: null });

  // 2. Killed after the number was recorded, while creating the assistant.
  worker = await startWorker();
  const bought = await waitFor(
    'attempt 2 to record the number',
    async () => {
      const r = await row(id);
      return r.provisioning_attempts === 2 && r.purchased_number ? r.purchased_number : undefined;
    },
    { timeoutMs: 40_000 },
  );
  await worker.kill();
  expect(await row(id)).toMatchObject({ status: 'provisioning', phone_number: null });

  // 3. The third attempt uses the recorded number.
  worker = await startWorker();
  const ready = await waitFor(
    'the receptionist to be ready',
    async () => {
      const r = await row(id);
      return r.status === 'provisioning' ? undefined : r;
    },
    { timeoutMs: 40_000 },
  );
  expect(ready).toMatchObject({
    status: 'ready',
    provisioning_attempts: 3,
    phone_number: bought,
  });
  // The same key is the same number: what the killed first attempt was buying.
  expect(bought).toBe(simulatedNumber(id, '512'));
  const events = await ctx.deps.stores.events.listForTenant(tenantId);
  expect(events.filter((e) => e.receptionistId === id).map((e) => e.type)).toEqual([
    'receptionist.ready',
  ]);
}, 120_000);
