import request from 'supertest';
import { simulatorHandoffs } from '../../apps/worker/src/sms';
import { campaignMessages, campaignPhone, recipientStates } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/worker';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { receptionistTenant } from '../support/receptionist';

// Never a recipient twice: a 200-recipient campaign sent by two worker processes at once,
// each SIGKILLed once while messages are in flight and started again. The simulated carrier
// logs every hand-off in Redis, outside the killed processes.
const RECIPIENTS = 200;
const RCP_PHONE = '+14155550100';

let ctx: TestContext;
const workers: Array<WorkerProcess | null> = [null, null];

// Real-time sends (about 300 ms each at SIMULATOR_SPEED=1): a kill lands mid-send.
const startWorker = () =>
  startWorkerProcess(ctx.config, { SIMULATOR_SPEED: '1', WORKER_CONCURRENCY: '20' });

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w?.kill()));
  await ctx?.close();
});

const smsCounts = async (campaignId: string): Promise<Record<string, number>> => {
  const rows = (await ctx.deps
    .knex('sms_messages')
    .where({ campaign_id: campaignId })
    .select('status')
    .count({ n: '*' })
    .groupBy('status')) as Array<{ status: string; n: string }>;
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
};

it('sends no recipient twice across two workers and two SIGKILLs mid-campaign', async () => {
  const { auth, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: RCP_PHONE,
  });
  workers[0] = await startWorker();
  workers[1] = await startWorker();
  const res = await request(ctx.app)
    .post('/api/v1/campaigns')
    .set('Authorization', auth)
    .send({
      name: 'Crash course',
      receptionist_id: rcp,
      message: 'Your boiler check is due; reply YES to book.',
      recipients: { phones: Array.from({ length: RECIPIENTS }, (_, i) => campaignPhone(i)) },
      send_rate_per_minute: 600,
    });
  expect(res.status).toBe(202);
  const campaignId = res.body.id as string;

  for (const [victim, threshold] of [
    [0, 50],
    [1, 110],
  ] as const) {
    // Kill only while sends are in flight: claimed messages whose outcome is not recorded.
    await waitFor(
      `${threshold} messages sent and a send in flight`,
      async () => {
        const counts = await smsCounts(campaignId);
        // Handed to the carrier: sent, and then maybe a receipt.
        const sent = (counts.sent ?? 0) + (counts.delivered ?? 0) + (counts.undelivered ?? 0);
        return sent >= threshold && (counts.sending ?? 0) > 0;
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    await workers[victim]?.kill();
    workers[victim] = await startWorker();
  }

  const done = await waitFor(
    'the campaign completed',
    async () => {
      const c = await ctx.deps.stores.campaigns.findById(ctx.deps.knex, campaignId);
      return c?.status === 'completed' ? c : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 200 },
  );
  const sms = await campaignMessages(ctx, campaignId);
  const handoffs = await simulatorHandoffs(ctx.redis, ctx.config.queuePrefix);
  // The property: one message per recipient at most, each handed to the carrier at most once.
  expect(new Set(sms.map((m) => m.to_number)).size).toBe(sms.length);
  expect(sms.map((m) => handoffs[m.id] ?? 0).filter((n) => n > 1)).toEqual([]);
  expect(sms.length).toBe(RECIPIENTS);
  // Every recipient ended once and is counted once; interrupted sends count as failed.
  // Handed to the carrier: sent, and then maybe a receipt.
  const sent = sms.filter((m) => ['sent', 'delivered', 'undelivered'].includes(m.status));
  const failed = sms.filter((m) => m.status === 'failed');
  for (const m of sent) expect(handoffs[m.id]).toBe(1);
  expect(failed.every((m) => m.error_code === 'send_interrupted')).toBe(true);
  expect(done).toMatchObject({ sent: sent.length, failed: failed.length, optedOut: 0 });
  expect(await recipientStates(ctx, campaignId)).toEqual(
    failed.length ? { sent: sent.length, failed: failed.length } : { sent: sent.length },
  );
  const events = (await ctx.deps
    .knex('events')
    .whereIn('type', ['sms.sent', 'campaign.completed'])
    .select('type', 'data')) as Array<{ type: string; data: { sms_id?: string } }>;
  expect(events.filter((e) => e.type === 'campaign.completed')).toHaveLength(1);
  expect(
    events
      .filter((e) => e.type === 'sms.sent')
      .map((e) => e.data.sms_id)
      .sort(),
  ).toEqual(sent.map((m) => m.id).sort());
}, 240_000);
