import request from 'supertest';
import type {
  TestCertificate,
  TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { createTestContext } from '../support/context';
import { startHttpsReceiver } from '../support/webhook-world';
import { emitCallStarted, startTestWorker, waitFor } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';
import { verifyBothSchemes } from '../support/webhooks';

// Delivery policies that need their own configuration: one attempt per delivery and a high
// disable threshold (counting under concurrency), the real 1 s / 5 s schedule, and the
// legacy per-receptionist webhook_url.
let cert: TestCertificate;
let receiver: TestReceiver;
let base: string;
let flakyHits = 0;
/** Runs before /flaky answers its n-th request (1-based): the attempt waits for it. */
let beforeFlakyAnswer: (hit: number) => Promise<void> = async () => undefined;

beforeAll(async () => {
  ({ cert, receiver, base } = await startHttpsReceiver({
    '/fail': (_q, res) => res.writeHead(500).end(),
    '/ok': (_q, res) => res.writeHead(204).end(),
    '/flaky': (_q, res) => {
      const hit = ++flakyHits;
      void beforeFlakyAnswer(hit).finally(() => res.writeHead(hit >= 3 ? 200 : 500).end());
    },
  }));
});
afterAll(() => receiver?.close());

async function world(env: Record<string, string>) {
  const ctx = await createTestContext(env);
  const worker = await startTestWorker(ctx, { webhookCa: cert.cert });
  const { rcp, ...t } = await receptionistTenant(ctx);
  const subscribe = async (p: string) =>
    (
      await request(ctx.app)
        .post('/api/v1/webhooks')
        .set('Authorization', t.auth)
        .send({ url: `${base}${p}` })
    ).body as { id: string; signing_secret: string };
  const emitOne = () => emitCallStarted(ctx, t.tenantId, rcp);
  return {
    ctx,
    worker,
    t,
    rcp,
    subscribe,
    emitOne,
    close: async () => (await worker.close(), await ctx.close()),
  };
}

it('counts concurrent failures on one subscription exactly', async () => {
  const w = await world({
    WEBHOOK_MAX_ATTEMPTS: '1',
    WEBHOOK_DISABLE_AFTER_FAILURES: '1000',
    WORKER_CONCURRENCY: '20',
  });
  try {
    const sub = await w.subscribe('/fail');
    // One transaction: the relay sees all forty at once, and their failures are recorded
    // together. (Forty transactions at once waited past the pool's 3 s acquire timeout on a
    // busy machine.)
    await w.ctx.deps.knex.transaction(async (trx) => {
      for (let i = 0; i < 40; i++) await emitCallStarted(w.ctx, w.t.tenantId, w.rcp, trx);
    });
    await waitFor('40 failed deliveries', async () => {
      const rows = await w.ctx.deps
        .knex('webhook_deliveries')
        .where({ subscription_id: sub.id, status: 'failed' });
      return rows.length === 40;
    });
    const row = await w.ctx.deps.knex('webhook_subscriptions').where({ id: sub.id }).first();
    expect(row.consecutive_failures).toBe(40);
  } finally {
    await w.close();
  }
});

it('waits 1 s and then 5 s between attempts on the default schedule', async () => {
  const w = await world({});
  try {
    expect(w.ctx.config.webhook.retryBackoffMs).toEqual([1000, 5000, 25000]);
    const sub = await w.subscribe('/flaky');
    // While attempts 2 and 3 are on the wire, the row still holds the schedule the previous
    // attempt's record set: when it is due, after that attempt's record.
    const scheduledAfterRecord: number[] = [];
    beforeFlakyAnswer = async (hit) => {
      if (hit < 2) return;
      const d = await w.ctx.deps
        .knex('webhook_deliveries')
        .where({ subscription_id: sub.id })
        .first('next_attempt_at', 'latest_attempted_at');
      scheduledAfterRecord.push(d.next_attempt_at.getTime() - d.latest_attempted_at.getTime());
    };
    await w.emitOne();
    await waitFor(
      'the third attempt to succeed',
      async () =>
        (await w.ctx.deps.knex('webhook_deliveries').where({ subscription_id: sub.id }).first())
          ?.status === 'succeeded',
      { timeoutMs: 45_000, intervalMs: 100 },
    );
    const attempts = await w.ctx.deps.knex('webhook_delivery_attempts_all').orderBy('attempt');
    const at: number[] = attempts.map((a: { attempted_at: Date }) => a.attempted_at.getTime());
    const [t1, t2, t3] = at as [number, number, number];
    expect(attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 200]);
    // Each wait is at least its step of the backoff, whatever the machine's load adds on top.
    // Both ends are stored to the millisecond (rounded), so a wait of exactly its step may
    // read 1 ms short (4,999 ms was seen once).
    const ROUNDING_MS = 1;
    expect(t2 - t1).toBeGreaterThanOrEqual(1000 - ROUNDING_MS);
    expect(t3 - t2).toBeGreaterThanOrEqual(5000 - ROUNDING_MS);
    // And no longer than its step was scheduled: the next attempt is due at most the step
    // after the record (the step is added as the outcome is decided, just before the record;
    // a slow record only makes it less), so the schedule is 1 s then 5 s, not a later step.
    expect(scheduledAfterRecord).toHaveLength(2);
    const [first, second] = scheduledAfterRecord as [number, number];
    expect(first).toBeLessThanOrEqual(1000 + ROUNDING_MS);
    expect(second).toBeLessThanOrEqual(5000 + ROUNDING_MS);
  } finally {
    await w.close();
  }
}, 90_000);

it('delivers to the legacy webhook_url, signed with a per-receptionist secret that is never returned', async () => {
  const w = await world({});
  try {
    await w.ctx.deps.stores.receptionists.update(w.t.tenantId, w.rcp, { webhookUrl: `${base}/ok` });
    const before = receiver.requests.filter((r) => r.path === '/ok').length;
    const eventId = await w.emitOne();
    const req = await waitFor('the legacy delivery', () =>
      receiver.requests.find(
        (r) => r.path === '/ok' && r.headers['x-service-event-id'] === eventId,
      ),
    );
    expect(receiver.requests.filter((r) => r.path === '/ok')).toHaveLength(before + 1);
    const row = await w.ctx.deps.knex('receptionists').where({ id: w.rcp }).first();
    expect(row.webhook_secret_ciphertext).toMatch(/^v1\.k1\./);
    const secret = w.worker.deps.secretBox.decrypt(
      row.webhook_secret_ciphertext,
      `receptionists/${w.t.tenantId}/${w.rcp}/webhook`,
    );
    verifyBothSchemes(req.body, req.headers, secret);
    const body = JSON.parse(req.body);
    expect(body).toMatchObject({ id: eventId, event: 'call.started', receptionist_id: w.rcp });
    // The secret appears in no API response.
    const shown = await request(w.ctx.app)
      .get(`/api/v1/receptionists/${w.rcp}`)
      .set('Authorization', w.t.auth);
    expect(JSON.stringify(shown.body)).not.toContain(secret);
    expect(shown.body.webhook_url).toBe(`${base}/ok`);
    // Clearing webhook_url stops legacy deliveries.
    await w.ctx.deps.stores.receptionists.update(w.t.tenantId, w.rcp, { webhookUrl: null });
    const next = await w.emitOne();
    await waitFor('fan-out of the next event', () => w.ctx.deps.stores.events.isFannedOut(next));
    expect(await w.ctx.deps.knex('webhook_deliveries').where({ event_id: next })).toHaveLength(0);
  } finally {
    await w.close();
  }
});
