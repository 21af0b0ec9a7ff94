import request from 'supertest';
import { simulatorHandoffs } from '../../apps/worker/src/sms';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/worker';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { receptionistTenant } from '../support/receptionist';

/** Handed to the carrier: sent, and then maybe a receipt (delivered or undelivered). */
const SENT = ['sent', 'delivered', 'undelivered'];
const sentCount = (counts: Record<string, number | undefined>) =>
  SENT.reduce((n, status) => n + (counts[status] ?? 0), 0);

// At most once under crashes: 300 messages are sent while the worker process is SIGKILLed
// in the middle of sends, three times. The simulated carrier logs every hand-off in Redis, so
// the log outlives the killed processes: no message may ever be handed over twice.
const MESSAGES = 300;
const RCP_PHONE = '+14155550100';

let ctx: TestContext;
let worker: WorkerProcess | null = null;

// Real-time sends (about 300 ms each at SIMULATOR_SPEED=1): a kill lands mid-send.
const startWorker = () =>
  startWorkerProcess(ctx.config, { SIMULATOR_SPEED: '1', WORKER_CONCURRENCY: '20' });

beforeAll(async () => {
  // 300 sends with one key, 50 at a time: more than the default burst (200, refilling at 100
  // a second) whenever the batches go faster than that. Rate limits are not under test here.
  ctx = await createTestContext({ RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' });
});
afterAll(async () => {
  if (worker) await worker.kill();
  await ctx?.close();
});

const countByStatus = async (): Promise<Record<string, number>> => {
  const rows = (await ctx.deps
    .knex('sms_messages')
    .select('status')
    .count({ n: '*' })
    .groupBy('status')) as Array<{ status: string; n: string }>;
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
};

it('never hands a message to the carrier twice across three SIGKILLs mid-send', async () => {
  const { auth, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: RCP_PHONE,
  });
  for (let batch = 0; batch < MESSAGES / 50; batch++) {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        request(ctx.app)
          .post('/api/v1/sms/send')
          .set('Authorization', auth)
          .send({
            receptionist_id: rcp,
            to: `+1415555${String(1000 + batch * 50 + i)}`,
            message: `Reminder ${batch * 50 + i}: your appointment is tomorrow at 09:30.`,
          }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(202));
  }

  worker = await startWorker();
  for (const threshold of [30, 100, 170]) {
    // Kill only while sends are in flight: claimed rows whose outcome is not recorded yet.
    await waitFor(
      `${threshold} messages sent and a send in flight`,
      async () => {
        const counts = await countByStatus();
        return sentCount(counts) >= threshold && (counts.sending ?? 0) > 0;
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    await worker.kill();
    worker = await startWorker();
  }
  await waitFor(
    'every message sent or failed',
    async () => {
      const counts = await countByStatus();
      return sentCount(counts) + (counts.failed ?? 0) === MESSAGES;
    },
    { timeoutMs: 90_000, intervalMs: 200 },
  );

  const rows = (await ctx.deps.knex('sms_messages').select('id', 'status', 'error_code')) as Array<{
    id: string;
    status: string;
    error_code: string | null;
  }>;
  const handoffs = await simulatorHandoffs(ctx.redis, ctx.config.queuePrefix);
  // The property: no message was ever handed to the carrier more than once.
  expect(Object.values(handoffs).filter((n) => n !== 1)).toEqual([]);
  const sent = rows.filter((r) => SENT.includes(r.status));
  const failed = rows.filter((r) => r.status === 'failed');
  // Every sent message was handed over exactly once; every failure is a send that a killed
  // worker interrupted (handed over or not: unknown, and never retried).
  for (const r of sent) expect(handoffs[r.id]).toBe(1);
  expect(failed.every((r) => r.error_code === 'send_interrupted')).toBe(true);
  // The kills did land mid-send, so the interrupted path was exercised.
  expect(failed.length).toBeGreaterThan(0);
  // One sms.sent per sent message, none for the others.
  const events = (await ctx.deps
    .knex('events')
    .where({ type: 'sms.sent' })
    .select('data')) as Array<{
    data: { sms_id: string };
  }>;
  expect(events.map((e) => e.data.sms_id).sort()).toEqual(sent.map((r) => r.id).sort());
}, 240_000);
