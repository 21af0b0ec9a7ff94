import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { burstOf, createThrottle } from '../../apps/worker/src/webhook-delivery/throttle';
import { createTestContext, type TestContext } from '../support/context';
import { emitCallStarted, startTestWorker, waitFor, type TestWorker } from '../support/worker';

// rate_limit_per_second over real HTTPS, with two workers sharing the throttle through Redis:
// a burst to a throttled subscription is never faster than its rate, another tenant's
// subscription is served meanwhile, and waiting for the throttle is never a failed attempt.
// The rate as the receiver's clock sees it (within 5 %) is a wall-clock figure: on a busy
// machine, deliveries delayed by scheduling arrive bunched. It is judged in `npm run
// chaos:quick` (SWITCHBOARD_CHAOS=1); `npm test` checks the bound no delay can fake (below),
// and the schedule's exact slots are checked on the Redis script itself at the end.
const JUDGE_RATE = process.env.SWITCHBOARD_CHAOS === '1';
const RATE = 5;
const BURST_EVENTS = 60;
const OTHER_EVENTS = 10;
let ctx: TestContext;
const workers: TestWorker[] = [];
let receiver: TestReceiver;
const arrivals: Record<string, number[]> = { '/throttled': [], '/other': [], '/patched': [] };

const record = (path: string) => (_req: IncomingMessage, res: ServerResponse) => {
  arrivals[path]?.push(Date.now());
  res.writeHead(204).end();
};

beforeAll(async () => {
  const cert = generateCertificate('IP:127.0.0.1');
  receiver = await startReceiver(cert, {
    '/throttled': record('/throttled'),
    '/other': record('/other'),
    '/patched': record('/patched'),
  });
  // An attempt's deadline far beyond what the receiver takes, so that a loaded machine's
  // stall is never a failed attempt. With 5 s, one delivery of the burst once needed a second
  // attempt beside a benchmark (load 9); a failure now names the first one's error.
  ctx = await createTestContext({ WEBHOOK_TIMEOUT_MS: '30000' });
  for (let i = 0; i < 2; i++) workers.push(await startTestWorker(ctx, { webhookCa: cert.cert }));
}, 60_000);
afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await Promise.all([ctx?.close(), receiver?.close()]);
});

async function tenantWith(url: string, rateLimit: number | null) {
  const t = await ctx.tenant(['admin']);
  const rcp = await ctx.deps.stores.receptionists.create({
    tenantId: t.tenantId,
    name: 'Desk',
    status: 'ready',
  });
  const res = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', t.auth)
    .send({ url, rate_limit_per_second: rateLimit });
  expect(res.status).toBe(201);
  expect(res.body.rate_limit_per_second).toBe(rateLimit);
  const emitMany = (n: number) =>
    ctx.deps.knex.transaction(async (trx) => {
      for (let i = 0; i < n; i++) await emitCallStarted(ctx, t.tenantId, rcp.id, trx);
    });
  return { subscriptionId: res.body.id as string, auth: t.auth, emitMany };
}

/** The least-squares slope of `times` (ms) over their rank: ms per delivery. */
function slopeMs(times: number[]): number {
  const n = times.length;
  const meanX = (n - 1) / 2;
  const meanY = times.reduce((a, b) => a + b, 0) / n;
  let cov = 0;
  let varX = 0;
  times.forEach((y, x) => {
    cov += (x - meanX) * (y - meanY);
    varX += (x - meanX) ** 2;
  });
  return cov / varX;
}

const throttledTotal = async () => {
  let sum = 0;
  for (const w of workers) {
    sum += (await w.deps.metrics.deliveriesThrottled.get()).values[0]?.value ?? 0;
  }
  return sum;
};

it('keeps a burst at the limit, serves another tenant meanwhile, and counts no failure', async () => {
  const base = `https://127.0.0.1:${receiver.port}`;
  const throttled = await tenantWith(`${base}/throttled`, RATE);
  const other = await tenantWith(`${base}/other`, null);
  const throttledSeen = arrivals['/throttled'] as number[];
  const otherSeen = arrivals['/other'] as number[];

  const emittedAt = Date.now();
  await throttled.emitMany(BURST_EVENTS);
  // The moment every delivery of the burst has been given its slot (sent, or waiting for a
  // slot: none is due and unasked, at most one in flight). The start of a burst is the
  // worker's busiest moment (fan-out, and a claim, a reservation and a release for each
  // delivery); slots that fall in it may be let go late, and arrive closer to the next.
  const scheduled = waitFor(
    'every delivery of the burst given its slot',
    async () => {
      const { rows } = (await ctx.deps.knex.raw(
        `SELECT count(*)::int AS all,
                count(*) FILTER (WHERE status = 'pending' AND next_attempt_at <= now())::int AS due,
                count(*) FILTER (WHERE status = 'delivering')::int AS delivering
           FROM webhook_deliveries WHERE subscription_id = ?`,
        [throttled.subscriptionId],
      )) as { rows: Array<{ all: number; due: number; delivering: number }> };
      const r = rows[0];
      return r && r.all === BURST_EVENTS && r.due === 0 && r.delivering <= 1 && Date.now();
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );
  await waitFor('the burst to start arriving', () => throttledSeen.length >= 1);
  // Noisy neighbour: the other tenant's deliveries all arrive while the throttled
  // subscription still has many waiting (they are not queued behind its backlog).
  await other.emitMany(OTHER_EVENTS);
  await waitFor("the other tenant's deliveries", () => otherSeen.length === OTHER_EVENTS, {
    timeoutMs: 30_000,
  });
  const throttledWhenOtherDone = throttledSeen.length;
  expect(throttledWhenOtherDone).toBeLessThanOrEqual(BURST_EVENTS - OTHER_EVENTS);

  await waitFor('the whole burst', () => throttledSeen.length === BURST_EVENTS, {
    timeoutMs: 60_000,
  });
  // Never faster: no slot is given before the events exist, and after the first bucket the
  // schedule gives one slot per 1/RATE s, so the last delivery cannot arrive earlier than
  // that after the emit, however late any delivery was (a delay only moves arrivals later).
  const lastArrival = Math.max(...throttledSeen);
  expect(lastArrival - emittedAt).toBeGreaterThanOrEqual(
    ((BURST_EVENTS - burstOf(RATE)) / RATE) * 1000 - 10,
  );
  // The rate the receiver saw, from its own timestamps, once the burst was scheduled: one
  // delivery per 1/RATE s. Measured as the least-squares slope of arrival time over arrival
  // rank (every arrival weighs in, so one late arrival at either end does not decide it),
  // and as the plain span, whose bound allows one bucket of burst on top of the rate.
  const scheduledAt = await scheduled;
  if (JUDGE_RATE) {
    const times = [...throttledSeen].sort((a, b) => a - b).filter((t) => t >= scheduledAt);
    expect(times.length).toBeGreaterThanOrEqual(20);
    const observed = 1000 / slopeMs(times);
    const spanS = ((times[times.length - 1] as number) - (times[0] as number)) / 1000;
    // (On a failure the message shows the figures.)
    expect({
      observed,
      spanS,
      within5Percent: Math.abs(observed - RATE) <= RATE * 0.05,
      neverFaster: times.length <= RATE * spanS * 1.05 + burstOf(RATE),
    }).toEqual({ observed, spanS, within5Percent: true, neverFaster: true });
  }

  // Waiting was not failing: one attempt each, all succeeded, no failure streak.
  await waitFor('every throttled delivery recorded', async () => {
    const rows = await ctx.deps
      .knex('webhook_deliveries')
      .where({ subscription_id: throttled.subscriptionId });
    return rows.length === BURST_EVENTS && rows.every((r) => r.status === 'succeeded') && rows;
  });
  const attempts = (await ctx.deps
    .knex('webhook_delivery_attempts_all as a')
    .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .where('d.subscription_id', throttled.subscriptionId)
    .select('a.status_code', 'a.error', 'a.duration_ms')) as Array<{
    status_code: number | null;
    error: string | null;
    duration_ms: number;
  }>;
  // (On a failure the message names every attempt that was not a 204.)
  expect({
    attempts: attempts.length,
    not204: attempts.filter((a) => a.status_code !== 204),
  }).toEqual({ attempts: BURST_EVENTS, not204: [] });
  const sub = await ctx.deps
    .knex('webhook_subscriptions')
    .where({ id: throttled.subscriptionId })
    .first();
  expect(sub).toMatchObject({ consecutive_failures: 0, last_failure_at: null, is_active: true });
  // Reported apart: deliveries waited for their slots. How many is a matter of timing: a
  // delivery that reaches the throttle after its slot (a loaded machine) finds it free and
  // is not counted as waiting. With the rate judged (chaos:quick, a quiet machine): at least
  // every delivery still to come when the other tenant was done (the first ones may have
  // found the schedule free while the burst was still being fanned out).
  const waited = await throttledTotal();
  expect(waited).toBeGreaterThan(0);
  if (JUDGE_RATE) expect(waited).toBeGreaterThanOrEqual(BURST_EVENTS - throttledWhenOtherDone);
}, 120_000);

it('applies a limit set or lifted by PATCH to the deliveries that follow', async () => {
  const base = `https://127.0.0.1:${receiver.port}`;
  const t = await tenantWith(`${base}/patched`, null);
  const seen = arrivals['/patched'] as number[];
  const patch = (rate: number | null) =>
    request(ctx.app)
      .patch(`/api/v1/webhooks/${t.subscriptionId}`)
      .set('Authorization', t.auth)
      .send({ rate_limit_per_second: rate });

  expect((await patch(2)).body.rate_limit_per_second).toBe(2);
  const before = await throttledTotal();
  await t.emitMany(6);
  await waitFor('6 deliveries at 2/s', () => seen.length === 6, { timeoutMs: 30_000 });
  expect(await throttledTotal()).toBeGreaterThanOrEqual(before + 6 - burstOf(2));

  expect((await patch(null)).body.rate_limit_per_second).toBeNull();
  const lifted = await throttledTotal();
  await t.emitMany(6);
  await waitFor('6 more deliveries', () => seen.length === 12, { timeoutMs: 30_000 });
  expect(await throttledTotal()).toBe(lifted);
});

describe('the schedule (Redis script)', () => {
  it('lets a burst go at once, then reserves one slot per attempt, the same on asking again', async () => {
    const throttle = createThrottle(ctx.deps.redis, ctx.config.queuePrefix);
    const sub = 'sched-1';
    // 2/s: a burst of 1, then one slot every 500 ms. Slots that far apart leave the test
    // 1.5 s to ask again before d's slot comes, however busy the machine (with 20/s it had
    // 100 ms, and a machine running at half speed once took longer).
    const first = await Promise.all(['a', 'b', 'c', 'd'].map((k) => throttle.reserve(sub, k, 2)));
    expect(first.map((r) => r.fresh)).toEqual([true, true, true, true]);
    const waits = first.map((r) => r.waitMs);
    expect(waits[0]).toBe(0);
    expect(waits[1]).toBeGreaterThan(0);
    // The slots themselves, not the waits: each wait is measured from its own call's instant,
    // and a busy machine may run the two calls apart.
    const key = `${ctx.config.queuePrefix}:throttle:held:${sub}`;
    const slots = await ctx.redis.hgetall(key);
    expect(Number(slots.d) - Number(slots.c)).toBeGreaterThanOrEqual(500);
    // Asking again before its slot: the same slot (not a new one further away), not fresh.
    const again = await throttle.reserve(sub, 'd', 2);
    expect(again.fresh).toBe(false);
    expect(again.waitMs).toBeLessThanOrEqual(waits[3] as number);
    expect(again.waitMs).toBeGreaterThan(0);
    expect(await ctx.redis.hget(key, 'd')).toBe(slots.d);
    // Once its slot has come, it goes (and its reservation is dropped).
    await waitFor("d's slot", async () => (await throttle.reserve(sub, 'd', 2)).waitMs === 0);
    expect(await ctx.redis.hexists(key, 'd')).toBe(0);
    expect(await ctx.redis.hexists(key, 'c')).toBe(1);
    // A paused attempt gives its slot up: back, it asks anew (a fresh slot, at the end).
    await throttle.forget(sub, 'c');
    expect(await ctx.redis.hexists(key, 'c')).toBe(0);
    expect((await throttle.reserve(sub, 'c', 2)).fresh).toBe(true);
  });
});
