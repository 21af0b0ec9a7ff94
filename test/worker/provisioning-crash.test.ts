import request from 'supertest';
import { simulatedNumber } from '../../apps/worker/src/provisioning';
import type { ProvisioningOperation } from '../../apps/worker/src/provisioning/simulator';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/worker';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

// A worker SIGKILLed in the middle of provisioning, twice: once while it buys the number,
// once after the number was recorded and while it creates the assistant. The receptionist
// still ends ready, with the one number its key buys, and one receptionist.ready.
let ctx: TestContext;
let worker: WorkerProcess | null = null;

/**
 * A test worker whose provisioning call `hold` (if given) never returns: each kill lands
 * inside that call, however slow or fast the machine (test/support/worker-main.ts).
 */
const startWorker = (hold?: ProvisioningOperation): Promise<WorkerProcess> =>
  startWorkerProcess(ctx.config, hold ? { TEST_PROVISIONING_HOLD: hold } : {});

/** Resolves once the worker says it is inside the held call. */
const heldIn = (w: WorkerProcess, operation: ProvisioningOperation): Promise<void> =>
  new Promise((resolve) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      if (!out.includes(`provisioning held in ${operation}`)) return;
      w.process.stdout?.off('data', onData);
      resolve();
    };
    w.process.stdout?.on('data', onData);
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
  worker = await startWorker('buyNumber');
  const buying = heldIn(worker, 'buyNumber');
  const res = await request(ctx.app)
    .post('/api/v1/receptionists')
    .set('Authorization', auth)
    .send({ name: 'Front Desk', area_code: '512' });
  expect(res.status).toBe(202);
  const id = res.body.id as string;

  // 1. Killed while buying: attempt 1 claimed, nothing recorded yet.
  await buying;
  await worker.kill();
  expect(await row(id)).toMatchObject({
    status: 'provisioning',
    provisioning_attempts: 1,
    purchased_number: null,
  });

  // 2. Killed after the number was recorded, while creating the assistant (attempt 2 claims
  // the receptionist once attempt 1's lease has lapsed).
  worker = await startWorker('createAssistant');
  await heldIn(worker, 'createAssistant');
  await worker.kill();
  const killed = await row(id);
  expect(killed).toMatchObject({
    status: 'provisioning',
    provisioning_attempts: 2,
    phone_number: null,
  });
  const bought = killed.purchased_number;
  expect(bought).not.toBeNull();

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
