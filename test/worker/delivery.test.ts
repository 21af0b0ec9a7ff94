import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { secretBoxForKey } from '@switchboard/crypto';
import { webhookSecretContext } from '@switchboard/db';
import { validateEventData } from '@switchboard/events';
import { verifyWebhook } from '@switchboard/sdk';
import type { TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { messages, uid } from '../support/fixtures';
import { emitCallStarted, waitFor } from '../support/worker';
import { addReceptionist } from '../support/receptionist';

// The whole path over real Postgres, Redis and HTTPS: ingest → outbox → relay → fan-out →
// signed delivery to a receiver on 127.0.0.1, with retries on a short schedule.
let receiver: TestReceiver;
let base: string;
let ctx: TestContext;
let world: WebhookWorld;
/** Per-path scripted answers: each request takes the next status; the last one repeats. */
const script: Record<string, number[]> = {};
const hits: Record<string, number> = {};
let holdNext = false;
const heldResponses: import('node:http').ServerResponse[] = [];

beforeAll(async () => {
  const routes: Record<string, (req: unknown, res: import('node:http').ServerResponse) => void> =
    {};
  for (let i = 0; i < 40; i++) {
    routes[`/r${i}`] = (_req, res) => {
      const path = `/r${i}`;
      const n = (hits[path] = (hits[path] ?? 0) + 1);
      const plan = script[path] ?? [200];
      const status = plan[Math.min(n, plan.length) - 1] as number;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(`answer ${status}`);
    };
  }
  // `/hold`: 500 at once, except the first request after `holdNext` is set, which is held
  // (unanswered) in `heldResponses` until the test answers it.
  routes['/hold'] = (req, res) => {
    if (holdNext) {
      holdNext = false;
      heldResponses.push(res);
    } else res.writeHead(500, { 'content-type': 'text/plain' }).end('answer 500');
  };
  world = await startWebhookWorld(routes, {
    env: { WEBHOOK_RETRY_BACKOFF_MS: '100,200,400', WEBHOOK_TIMEOUT_MS: '2000' },
    runner: { metricsPort: 0 },
  });
  ({ receiver, base, ctx } = world);
});
afterAll(() => world?.close());

let nextPath = 0;
/** A receiver path of its own for one subscription, answering `plan` in turn. */
const path = (plan: number[] = [200]) => {
  const p = `/r${nextPath++}`;
  script[p] = plan;
  return p;
};
const received = (p: string) => receiver.requests.filter((r) => r.path === p);

async function subscribe(auth: string, p: string, events?: string[]) {
  const res = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({ url: `${base}${p}`, ...(events ? { events } : {}) });
  expect(res.status).toBe(201);
  return res.body as { id: string; signing_secret: string };
}

async function receptionist(tenantId: string) {
  return await addReceptionist(ctx, tenantId, { phoneNumber: '+14155550199' });
}

const emitStarted = (tenantId: string, receptionistId: string) =>
  emitCallStarted(ctx, tenantId, receptionistId);

const deliveriesOf = (subscriptionId: string) =>
  ctx.deps
    .knex('webhook_deliveries')
    .where({ subscription_id: subscriptionId })
    .orderBy('created_at');
const subscriptionRow = (id: string) =>
  ctx.deps.knex('webhook_subscriptions').where({ id }).first();

/**
 * Resolves once the deliveries queue holds no job of the delivery any more: every attempt
 * job was processed (or found nothing to claim). Only then can "no further request" be
 * asserted: nothing is left that could send one.
 */
const jobsSettled = (deliveryId: string) =>
  waitFor(`no queued job left for ${deliveryId}`, async () => {
    const jobs = await ctx.queues.deliveries.getJobs([
      'active',
      'waiting',
      'delayed',
      'prioritized',
      'paused',
    ]);
    return !jobs.some((j) => j?.id?.startsWith(`${deliveryId}-`));
  });
const fannedOut = (eventId: string) =>
  waitFor(`event ${eventId} to be fanned out`, async () => {
    return (await ctx.deps.stores.events.isFannedOut(eventId)) || undefined;
  });
const eventIdsAt = (p: string) => received(p).map((r) => r.headers['x-service-event-id']);

describe('fan-out and signed delivery', () => {
  it('delivers an ingested call to matching subscriptions only, never across tenants', async () => {
    const a = await ctx.tenant(['admin']);
    const b = await ctx.tenant(['admin']);
    const rcpA = await receptionist(a.tenantId);
    await receptionist(b.tenantId);
    const [pAll, pCompleted, pSms, pOther] = [path(), path(), path(), path()] as string[];
    const all = await subscribe(a.auth, pAll as string);
    await subscribe(a.auth, pCompleted as string, ['call.completed']);
    const sms = await subscribe(a.auth, pSms as string, ['sms.received', 'not.yet_emitted']);
    const other = await subscribe(b.auth, pOther as string);

    const p = uid();
    const ingest = (m: object) =>
      request(ctx.app)
        .post('/internal/v1/telephony/events')
        .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
        .send(m);
    expect((await ingest(messages.started(rcpA, p, '2026-11-21T10:00:00.000Z'))).status).toBe(202);
    expect(
      (
        await ingest(
          messages.ended(rcpA, p, '2026-11-21T10:00:00.000Z', '2026-11-21T10:01:35.000Z'),
        )
      ).status,
    ).toBe(202);

    await waitFor(
      'two deliveries to the catch-all subscription',
      () => received(pAll as string).length === 2,
    );
    await waitFor(
      'one delivery to the call.completed subscription',
      () => received(pCompleted as string).length === 1,
    );
    const bodies = received(pAll as string).map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => b.event).sort()).toEqual(['call.completed', 'call.started']);
    for (const r of received(pAll as string)) {
      const body = JSON.parse(r.body);
      expect(Object.keys(body)).toEqual([
        'id',
        'event',
        'receptionist_id',
        'data',
        'timestamp',
        'livemode',
      ]);
      expect(body.livemode).toBe(true);
      expect(body.id).toMatch(/^evt_/);
      expect(body.receptionist_id).toBe(rcpA);
      expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(validateEventData(body.event, body.data)).toBeNull();
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toBe('Switchboard-Webhooks/1');
      expect(r.headers['x-service-event-id']).toBe(body.id);
      expect(r.headers['webhook-id']).toBe(body.id);
      verifyWebhook(r.body, r.headers, all.signing_secret);
      const verified = new Webhook(all.signing_secret).verify(r.body, {
        'webhook-id': r.headers['webhook-id'] as string,
        'webhook-timestamp': r.headers['webhook-timestamp'] as string,
        'webhook-signature': r.headers['webhook-signature'] as string,
      });
      expect(verified).toEqual(body);
    }
    // Both events are fanned out, and fan-out made no delivery for the non-matching and the
    // other tenant's subscriptions: with no delivery row, nothing can ever be sent to them.
    const ingested = await ctx.deps.knex('events').where({ tenant_id: a.tenantId }).pluck('id');
    expect(ingested).toHaveLength(2);
    for (const id of ingested) await fannedOut(id);
    expect(await deliveriesOf(sms.id)).toHaveLength(0);
    expect(await deliveriesOf(other.id)).toHaveLength(0);
    // The other tenant's own event reaches it, and it is the only thing that ever did.
    const theirs = await emitStarted(b.tenantId, await receptionist(b.tenantId));
    await waitFor("the other tenant's own event", () => received(pOther as string).length > 0);
    expect(eventIdsAt(pOther as string)).toEqual([theirs]);
    expect(received(pSms as string)).toHaveLength(0);
    const rows = await deliveriesOf(all.id);
    expect(
      rows.every(
        (d: { status: string; attempts: number }) => d.status === 'succeeded' && d.attempts === 1,
      ),
    ).toBe(true);
    const sub = await subscriptionRow(all.id);
    expect(sub.last_success_at).toBeInstanceOf(Date);
    expect(sub.consecutive_failures).toBe(0);
  });
});

describe('retries', () => {
  it('retries a transient failure with the same event id and succeeds', async () => {
    const t = await ctx.tenant(['admin']);
    const rcp = await receptionist(t.tenantId);
    const p = path([500, 503, 200]);
    const sub = await subscribe(t.auth, p);
    const eventId = await emitStarted(t.tenantId, rcp);
    await waitFor(
      'the delivery to succeed',
      async () => (await deliveriesOf(sub.id))[0]?.status === 'succeeded',
    );
    const reqs = received(p);
    expect(reqs).toHaveLength(3);
    expect(new Set(reqs.map((r) => r.headers['x-service-event-id']))).toEqual(new Set([eventId]));
    const [delivery] = await deliveriesOf(sub.id);
    const attempts = await ctx.deps
      .knex('webhook_delivery_attempts_all')
      .where({ delivery_id: delivery.id })
      .orderBy('attempt');
    expect(attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 503, 200]);
    expect(attempts.map((a: { error: string | null }) => a.error)).toEqual([
      'http_error',
      'http_error',
      null,
    ]);
    expect(attempts[0].response_excerpt).toBe('answer 500');
    // The waits follow the schedule: ≥ 100 ms after the first failure, ≥ 200 ms after the second.
    const [t1, t2, t3] = attempts.map((a: { attempted_at: Date }) => a.attempted_at.getTime()) as [
      number,
      number,
      number,
    ];
    expect(t2 - t1).toBeGreaterThanOrEqual(100);
    expect(t3 - t2).toBeGreaterThanOrEqual(200);
    expect((await subscriptionRow(sub.id)).consecutive_failures).toBe(0);
  });

  it('makes exactly 3 attempts, then counts one failure on the subscription', async () => {
    const t = await ctx.tenant(['admin']);
    const rcp = await receptionist(t.tenantId);
    const p = path([500]);
    const sub = await subscribe(t.auth, p);
    await emitStarted(t.tenantId, rcp);
    const [failed] = await waitFor('the delivery to fail', async () => {
      const rows = await deliveriesOf(sub.id);
      return rows[0]?.status === 'failed' ? rows : undefined;
    });
    await jobsSettled(failed.id);
    expect(received(p)).toHaveLength(3);
    expect(failed.attempts).toBe(3);
    const row = await subscriptionRow(sub.id);
    expect(row).toMatchObject({ consecutive_failures: 1, is_active: true });
    expect(row.last_failure_at).toBeInstanceOf(Date);
  });
});

describe('auto-disable', () => {
  it('the 19th consecutive failure keeps it active; the 20th disables it and stops deliveries', async () => {
    const t = await ctx.tenant(['admin']);
    const rcp = await receptionist(t.tenantId);
    const p = path([500]);
    const sub = await subscribe(t.auth, p);
    await ctx.deps
      .knex('webhook_subscriptions')
      .where({ id: sub.id })
      .update({ consecutive_failures: 18 });

    await emitStarted(t.tenantId, rcp);
    await waitFor(
      'the 19th failure',
      async () => (await subscriptionRow(sub.id)).consecutive_failures === 19,
    );
    expect((await subscriptionRow(sub.id)).is_active).toBe(true);

    await emitStarted(t.tenantId, rcp);
    await waitFor(
      'the 20th failure',
      async () => (await subscriptionRow(sub.id)).consecutive_failures === 20,
    );
    const disabled = await subscriptionRow(sub.id);
    expect(disabled).toMatchObject({ is_active: false, disabled_reason: 'consecutive_failures' });
    expect(disabled.disabled_at).toBeInstanceOf(Date);
    const shown = await request(ctx.app)
      .get(`/api/v1/webhooks/${sub.id}`)
      .set('Authorization', t.auth);
    expect(shown.body).toMatchObject({
      is_active: false,
      disabled_reason: 'consecutive_failures',
      consecutive_failures: 20,
    });

    // No deliveries after disable: a new event creates none and the receiver hears nothing.
    const before = received(p).length;
    const eventId = await emitStarted(t.tenantId, rcp);
    await fannedOut(eventId);
    expect(await ctx.deps.knex('webhook_deliveries').where({ event_id: eventId })).toHaveLength(0);

    // enable: active again, counter zeroed, deliveries resume.
    script[p] = [200];
    const enabled = await request(ctx.app)
      .post(`/api/v1/webhooks/${sub.id}/enable`)
      .set('Authorization', t.auth);
    expect(enabled.body).toMatchObject({
      is_active: true,
      consecutive_failures: 0,
      disabled_at: null,
      disabled_reason: null,
    });
    const afterEnable = await emitStarted(t.tenantId, rcp);
    await waitFor('a delivery after enable', () => received(p).length === before + 1);
    // The one request since the disable is the new event's: the disabled-time one never went.
    expect(eventIdsAt(p).slice(before)).toEqual([afterEnable]);
    expect(eventIdsAt(p)).not.toContain(eventId);
  });

  it('cancels pending deliveries when the subscription is disabled', async () => {
    const t = await ctx.tenant(['admin']);
    const rcp = await receptionist(t.tenantId);
    const p = path([500]);
    const sub = await subscribe(t.auth, p);
    await ctx.deps
      .knex('webhook_subscriptions')
      .where({ id: sub.id })
      .update({ consecutive_failures: 19 });
    // The second event starts once the first is on its second attempt: when the first
    // exhausts its attempts and disables the subscription, the second is still waiting for
    // a retry, and is cancelled instead of being sent again.
    await emitStarted(t.tenantId, rcp);
    await waitFor('two attempts of the first event', () => received(p).length >= 2);
    await emitStarted(t.tenantId, rcp);
    await waitFor('both deliveries to be final', async () => {
      const rows = await deliveriesOf(sub.id);
      return (
        rows.length === 2 &&
        rows.every((d: { status: string }) => ['failed', 'canceled'].includes(d.status))
      );
    });
    for (const row of await deliveriesOf(sub.id)) await jobsSettled(row.id);
    // Read once nothing is left in flight (a first attempt may run in its event's job: every
    // POST is listed): an attempt in flight at the cancel counts too.
    await waitFor('every POST to be recorded', async () => {
      const ids = (await deliveriesOf(sub.id)).map((d: { id: string }) => d.id);
      const logged = await ctx.deps
        .knex('webhook_delivery_attempts_all')
        .whereIn('delivery_id', ids);
      return logged.length === received(p).length ? true : undefined;
    });
    const rows = await deliveriesOf(sub.id);
    expect(rows.map((d: { status: string }) => d.status)).toEqual(['failed', 'canceled']);
    expect(rows[1].attempts).toBeLessThan(3);
    expect(received(p)).toHaveLength(3 + rows[1].attempts);
    expect((await subscriptionRow(sub.id)).is_active).toBe(false);
  });

  it('counts an attempt in flight at the disable on its canceled delivery', async () => {
    const t = await ctx.tenant(['admin']);
    const rcp = await receptionist(t.tenantId);
    const sub = await subscribe(t.auth, '/hold');
    await ctx.deps
      .knex('webhook_subscriptions')
      .where({ id: sub.id })
      .update({ consecutive_failures: 19 });
    // The second event's first POST is held at the receiver while the first event spends its
    // attempts and disables the subscription, which cancels the second mid-POST.
    holdNext = true;
    const held = await emitStarted(t.tenantId, rcp);
    await waitFor('the held POST to arrive', () => heldResponses.length === 1);
    await emitStarted(t.tenantId, rcp);
    await waitFor('the subscription to be disabled', async () =>
      (await subscriptionRow(sub.id)).is_active === false ? true : undefined,
    );
    await waitFor('the held delivery to be canceled', async () =>
      (await deliveriesOf(sub.id)).find((d: { event_id: string }) => d.event_id === held)
        ?.status === 'canceled'
        ? true
        : undefined,
    );
    heldResponses.pop()?.writeHead(500).end('late');
    const rows = await deliveriesOf(sub.id);
    const heldId = rows.find((d: { event_id: string }) => d.event_id === held)?.id as string;
    // The held attempt may run in its event's job, not a deliveries job: wait for its row.
    await waitFor('the held attempt to be recorded', async () =>
      (await ctx.deps.knex('webhook_delivery_attempts_all').where({ delivery_id: heldId })).length >
      0
        ? true
        : undefined,
    );
    for (const row of rows) await jobsSettled(row.id);
    for (const row of await deliveriesOf(sub.id)) {
      const attemptRows = await ctx.deps
        .knex('webhook_delivery_attempts_all')
        .where({ delivery_id: row.id, round: row.round });
      const posts = receiver.requests.filter(
        (r) => r.path === '/hold' && r.headers['x-service-event-id'] === row.event_id,
      );
      expect({ status: row.status, attempts: row.attempts, rows: attemptRows.length }).toEqual({
        status: row.event_id === held ? 'canceled' : 'failed',
        attempts: posts.length,
        rows: posts.length,
      });
    }
  });
});

describe('deleting a subscription', () => {
  it('cancels its pending deliveries', async () => {
    const t = await ctx.tenant(['admin']);
    const rcp = await receptionist(t.tenantId);
    const p = path([500]);
    const sub = await subscribe(t.auth, p);
    await emitStarted(t.tenantId, rcp);
    await waitFor('a first failed attempt', () => received(p).length >= 1);
    const [delivery] = await deliveriesOf(sub.id);
    const del = await request(ctx.app)
      .delete(`/api/v1/webhooks/${sub.id}`)
      .set('Authorization', t.auth);
    expect(del.status).toBe(204);
    const count = received(p).length;
    await jobsSettled(delivery.id);
    expect(received(p).length).toBeLessThanOrEqual(count + 1); // at most the attempt in flight
    expect(await deliveriesOf(sub.id)).toHaveLength(0);
  });
});

describe('manual retry and the delivery log', () => {
  it('a failed delivery retried by hand gets a fresh round of attempts', async () => {
    const t = await ctx.tenant(['admin']);
    const rcp = await receptionist(t.tenantId);
    const p = path([500]);
    const sub = await subscribe(t.auth, p);
    const eventId = await emitStarted(t.tenantId, rcp);
    await waitFor(
      'the delivery to fail',
      async () => (await deliveriesOf(sub.id))[0]?.status === 'failed',
    );
    script[p] = [200];
    const [delivery] = await deliveriesOf(sub.id);
    const retry = await request(ctx.app)
      .post(`/api/v1/webhooks/${sub.id}/deliveries/${delivery.id}/retry`)
      .set('Authorization', t.auth);
    expect(retry.status).toBe(202);
    await waitFor(
      'the retried delivery to succeed',
      async () => (await deliveriesOf(sub.id))[0]?.status === 'succeeded',
    );
    const log = await request(ctx.app)
      .get(`/api/v1/webhooks/${sub.id}/deliveries`)
      .set('Authorization', t.auth);
    expect(log.status).toBe(200);
    const [item] = log.body.data;
    expect(item).toMatchObject({
      id: delivery.id,
      event_id: eventId,
      event_type: 'call.started',
      status: 'succeeded',
    });
    expect(item.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([
      500, 500, 500, 200,
    ]);
    expect(received(p).every((r) => r.headers['x-service-event-id'] === eventId)).toBe(true);
    // Counters: the exhausted round counted one failure, the success zeroed it.
    expect((await subscriptionRow(sub.id)).consecutive_failures).toBe(0);
  });
});

describe('where attempts are kept', () => {
  interface Listed {
    round: number;
    attempt: number;
    status_code: number | null;
    error: string | null;
    response_excerpt: string | null;
  }
  /** The attempts the API lists for a delivery (GET .../deliveries/{delivery_id}). */
  const listed = async (auth: string, subscriptionId: string, deliveryId: string) => {
    const res = await request(ctx.app)
      .get(`/api/v1/webhooks/${subscriptionId}/deliveries/${deliveryId}`)
      .set('Authorization', auth);
    expect(res.status).toBe(200);
    return (res.body.attempts as Listed[]).map((a) => ({
      round: a.round,
      attempt: a.attempt,
      status_code: a.status_code,
      error: a.error,
      response_excerpt: a.response_excerpt,
    }));
  };
  /** The attempt rows of a delivery (not its latest attempt, which is on its own row). */
  const attemptRows = async (deliveryId: string) =>
    (await ctx.deps
      .knex('webhook_delivery_attempts')
      .where({ delivery_id: deliveryId })
      .orderBy(['round', 'attempt'])
      .select('round', 'attempt')) as Array<{ round: number; attempt: number }>;

  /** One event to a subscription answering `statuses` in turn, once its delivery succeeded. */
  const succeededAfter = async (statuses: number[]) => {
    const t = await ctx.tenant(['admin']);
    const rcp = await receptionist(t.tenantId);
    const sub = await subscribe(t.auth, path(statuses));
    await emitStarted(t.tenantId, rcp);
    await waitFor(
      'the delivery to succeed',
      async () => (await deliveriesOf(sub.id))[0]?.status === 'succeeded',
    );
    const [delivery] = await deliveriesOf(sub.id);
    await jobsSettled(delivery.id);
    return { t, sub, delivery };
  };

  it('a delivery that succeeds at its first attempt writes no attempt row, yet lists it', async () => {
    const { t, sub, delivery } = await succeededAfter([200]);
    expect(await attemptRows(delivery.id)).toEqual([]);
    expect(await listed(t.auth, sub.id, delivery.id)).toEqual([
      { round: 1, attempt: 1, status_code: 200, error: null, response_excerpt: 'answer 200' },
    ]);
  });

  it('3 attempts are listed in order: 2 rows and the latest on the delivery', async () => {
    const { t, sub, delivery } = await succeededAfter([500, 503, 200]);
    expect(await attemptRows(delivery.id)).toEqual([
      { round: 1, attempt: 1 },
      { round: 1, attempt: 2 },
    ]);
    expect(await listed(t.auth, sub.id, delivery.id)).toEqual(
      [500, 503, 200].map((status, i) => ({
        round: 1,
        attempt: i + 1,
        status_code: status,
        error: status === 200 ? null : 'http_error',
        response_excerpt: `answer ${status}`,
      })),
    );
  });

  it("a manual retry's new round keeps the old round's attempts listed", async () => {
    const t = await ctx.tenant(['admin']);
    const rcp = await receptionist(t.tenantId);
    const sub = await subscribe(t.auth, '/hold');
    const eventId = await emitStarted(t.tenantId, rcp);
    await waitFor(
      'the delivery to fail',
      async () => (await deliveriesOf(sub.id))[0]?.status === 'failed',
    );
    const [delivery] = await deliveriesOf(sub.id);
    await jobsSettled(delivery.id);
    const failedRound = [1, 2, 3].map((attempt) => ({
      round: 1,
      attempt,
      status_code: 500,
      error: 'http_error',
      response_excerpt: 'answer 500',
    }));
    // The new round's first POST is held: the round has begun, nothing of it is recorded.
    holdNext = true;
    const retried = await request(ctx.app)
      .post(`/api/v1/webhooks/${sub.id}/deliveries/${delivery.id}/retry`)
      .set('Authorization', t.auth);
    expect(retried.status).toBe(202);
    await waitFor('the retried POST to arrive', () => heldResponses.length === 1);
    expect((await deliveriesOf(sub.id))[0]).toMatchObject({ round: 2, attempts: 0 });
    expect(await listed(t.auth, sub.id, delivery.id)).toEqual(failedRound);
    heldResponses.pop()?.writeHead(200, { 'content-type': 'text/plain' }).end('late 200');
    await waitFor(
      'the retried delivery to succeed',
      async () => (await deliveriesOf(sub.id))[0]?.status === 'succeeded',
    );
    await jobsSettled(delivery.id);
    expect(await attemptRows(delivery.id)).toEqual(
      failedRound.map(({ round, attempt }) => ({ round, attempt })),
    );
    expect(await listed(t.auth, sub.id, delivery.id)).toEqual([
      ...failedRound,
      { round: 2, attempt: 1, status_code: 200, error: null, response_excerpt: 'late 200' },
    ]);
    const posts = receiver.requests.filter(
      (r) => r.path === '/hold' && r.headers['x-service-event-id'] === eventId,
    );
    expect(posts).toHaveLength(4);
  });
});

describe('metrics', () => {
  it('serves deliveries by outcome, attempt latency, lag and queue depth', async () => {
    const res = await fetch(`http://127.0.0.1:${world.worker.runner.metricsPort}/metrics`);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toMatch(/switchboard_deliveries_total\{outcome="succeeded"\} [1-9]/);
    expect(text).toMatch(/switchboard_deliveries_total\{outcome="retry"\} [1-9]/);
    expect(text).toMatch(/switchboard_delivery_attempt_seconds_count\{result="success"\} [1-9]/);
    expect(text).toMatch(/switchboard_delivery_lag_seconds_count [1-9]/);
    expect(text).toMatch(/switchboard_queue_jobs\{queue="deliveries",state="waiting"\} \d+/);
  });
});

describe('a secret that cannot be decrypted (wrong SECRET_ENCRYPTION_KEY)', () => {
  it('sends nothing, counts nothing, and keeps the delivery pending for a later try', async () => {
    const t = await ctx.tenant(['admin']);
    const rcp = await receptionist(t.tenantId);
    const p = path([200]);
    const sub = await subscribe(t.auth, p);
    const otherKey = secretBoxForKey(Buffer.alloc(32, 9));
    await ctx.deps
      .knex('webhook_subscriptions')
      .where({ id: sub.id })
      .update({
        secret_ciphertext: otherKey.encrypt('whsec_x', webhookSecretContext(t.tenantId, sub.id)),
      });
    await emitStarted(t.tenantId, rcp);
    const [delivery] = await waitFor('the delivery to be released', async () => {
      const rows = await deliveriesOf(sub.id);
      return rows[0]?.status === 'pending' &&
        rows[0].next_attempt_at > new Date(Date.now() + 30_000)
        ? rows
        : undefined;
    });
    expect(delivery).toMatchObject({ attempts: 0, status: 'pending' });
    expect(received(p)).toHaveLength(0);
    expect((await subscriptionRow(sub.id)).consecutive_failures).toBe(0);
  });
});
