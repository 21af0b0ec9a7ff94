import { DeliveryLifecycle, type AttemptRecord, type ClaimedDelivery } from '@switchboard/db';
import { validateEventData } from '@switchboard/events';
import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';
import { fanOut } from '../support/fan-out';

// The delivery lifecycle's batched statements (no worker running: called directly): a batch
// behaves as its calls one by one would, duplicates included, and the failure streak is
// exact when many deliveries of one subscription are exhausted at once.
let ctx: TestContext;
const lifecycle = new DeliveryLifecycle();
const LOCK_MS = 10_000;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

/** `n` events of a fresh subscriber, fanned out in one batch, and their deliveries. */
async function deliveries(n: number) {
  const s = await subscriber(ctx, 'https://127.0.0.1:9/hook');
  const eventIds: string[] = [];
  for (let i = 0; i < n; i++) {
    eventIds.push(await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId));
  }
  const open = await fanOut(ctx.deps.knex, eventIds);
  return { ...s, eventIds, open };
}

/** One relay batch (publishNext) with room to spare, and what it made for `tenantId`. */
async function publishFor(
  tenantId: string,
  opts: { room?: number; rooms?: Map<string, number> } = {},
) {
  const batch = await lifecycle.publishNext(ctx.deps.knex, {
    after: '',
    otherRoom: opts.room ?? 100,
    rooms: opts.rooms,
    limit: 100,
    lockMs: LOCK_MS,
  });
  return batch.made.filter((c) => c.delivery.tenantId === tenantId);
}

it("the relay's batch (publishNext) claims and fans out, returns what it made, claimed, and makes nothing twice", async () => {
  const s = await subscriber(ctx, 'https://127.0.0.1:9/hook');
  const eventIds = [
    await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId),
    await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId),
  ];
  const made = await publishFor(s.tenant.tenantId);
  expect(made.map((c) => c.delivery.eventId).sort()).toEqual([...eventIds].sort());
  // As a claim returns them: claimed, with their event and their subscription.
  for (const c of made) {
    expect(c.delivery).toMatchObject({ status: 'delivering', claims: 1, attempts: 0, round: 1 });
    expect(c.event).toMatchObject({ type: 'call.started', livemode: true });
    expect(c.subscription).toMatchObject({ isActive: true, tenantId: s.tenant.tenantId });
  }
  expect(await ctx.deps.stores.events.pending(eventIds)).toEqual(new Set());
  // Held: nobody else claims them until their claims lapse; nothing is open to the reconciler.
  const requests = made.map((c) => ({ deliveryId: c.delivery.id, round: 1, attempt: 1 }));
  expect(await lifecycle.claim(ctx.deps.knex, requests, LOCK_MS)).toEqual([undefined, undefined]);
  const overdue = await lifecycle.overdue(ctx.deps.knex, 0, 10_000);
  expect(overdue.filter((d) => eventIds.includes(d.eventId))).toEqual([]);
  // Out of the outbox, the events are never the relay's again.
  expect(await publishFor(s.tenant.tenantId)).toEqual([]);
});

it("takes a tenant's events while their deliveries fit its room, its first one always", async () => {
  const s = await subscriber(ctx, 'https://127.0.0.1:9/hook');
  // A second subscription: every event makes two deliveries.
  const again = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', s.tenant.auth)
    .send({ url: 'https://127.0.0.1:9/other' });
  expect(again.status).toBe(201);
  const eventIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    eventIds.push(await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId));
  }
  const tenant = s.tenant.tenantId;
  // No room: nothing is taken.
  expect(await publishFor(tenant, { rooms: new Map([[tenant, 0]]) })).toEqual([]);
  expect(await ctx.deps.stores.events.pending(eventIds)).toEqual(new Set(eventIds));
  // Room for one delivery: the first event is taken whole (two), the others wait.
  const first = await publishFor(tenant, { rooms: new Map([[tenant, 1]]) });
  expect(first.map((c) => c.delivery.eventId)).toEqual([eventIds[0], eventIds[0]]);
  // Room for three (any tenant's): one event more, not two.
  const second = await publishFor(tenant, { room: 3 });
  expect(second.map((c) => c.delivery.eventId)).toEqual([eventIds[1], eventIds[1]]);
  expect(await ctx.deps.stores.events.pending(eventIds)).toEqual(new Set([eventIds[2]]));
});

it('claims each delivery of a batch once; a duplicate request in the batch gets nothing', async () => {
  const { open } = await deliveries(2);
  const [a, b] = open.map((d) => ({ deliveryId: d.id, round: 1, attempt: 1 }));
  const claimed = await lifecycle.claim(
    ctx.deps.knex,
    [a!, b!, a!, { ...b!, attempt: 2 }],
    LOCK_MS,
  );
  expect(claimed.map((c) => c?.delivery.id ?? null)).toEqual([
    a!.deliveryId,
    b!.deliveryId,
    null,
    null,
  ]);
  expect(claimed[0]?.event.type).toBe('call.started');
  expect(claimed[0]?.subscription?.isActive).toBe(true);
  // Held: no second claim until the lock lapses.
  expect(await lifecycle.claim(ctx.deps.knex, [a!], LOCK_MS)).toEqual([undefined]);
});

it('the reconciler lists a delivery overdue by the grace once no claim holds it', async () => {
  const { open } = await deliveries(2);
  const [pending, claimed] = open;
  await ctx.deps
    .knex('webhook_deliveries')
    .whereIn('id', [pending!.id, claimed!.id])
    .update({ next_attempt_at: ctx.deps.knex.raw(`now() - interval '2 seconds'`) });
  await lifecycle.claim(
    ctx.deps.knex,
    [{ deliveryId: claimed!.id, round: 1, attempt: 1 }],
    LOCK_MS,
  );
  const overdueIds = async () =>
    (await lifecycle.overdue(ctx.deps.knex, 1_000, 10_000)).map((d) => d.id);
  expect(await overdueIds()).toContain(pending!.id);
  expect(await overdueIds()).not.toContain(claimed!.id);
});

it('records a batch of successes and retries; only rows at the claimed attempt move', async () => {
  const { open, subscription } = await deliveries(3);
  const claimed = (await lifecycle.claim(
    ctx.deps.knex,
    open.map((d) => ({ deliveryId: d.id, round: 1, attempt: 1 })),
    LOCK_MS,
  )) as ClaimedDelivery[];
  const base = { statusCode: 200, error: null, durationMs: 3, excerpt: 'ok', logAttempt: true };
  const [d1, d2, d3] = claimed.map((c) => c.delivery);
  const moved = await lifecycle.record(ctx.deps.knex, [
    { ...base, delivery: d1!, outcome: { kind: 'succeeded' } },
    {
      ...base,
      statusCode: 503,
      delivery: d2!,
      outcome: { kind: 'retry', nextAttemptAt: new Date(Date.now() + 60_000) },
    },
    // Superseded: recorded as if for an attempt this row is not at.
    { ...base, delivery: { ...d3!, attempts: 1 }, outcome: { kind: 'succeeded' } },
  ]);
  expect(moved).toEqual([true, true, false]);
  const rows = await ctx.deps
    .knex('webhook_deliveries')
    .whereIn('id', [d1!.id, d2!.id, d3!.id])
    .select('id', 'status', 'attempts', 'claims');
  const byId = new Map(rows.map((r: { id: string }) => [r.id, r]));
  expect(byId.get(d1!.id)).toMatchObject({ status: 'succeeded', attempts: 1, claims: 0 });
  expect(byId.get(d2!.id)).toMatchObject({ status: 'pending', attempts: 1, claims: 0 });
  expect(byId.get(d3!.id)).toMatchObject({ status: 'delivering', attempts: 0 });
  const sub = await ctx.deps.knex('webhook_subscriptions').where({ id: subscription.id }).first();
  expect(sub.consecutive_failures).toBe(0);
  expect(sub.last_success_at).not.toBeNull();
  expect(sub.last_failure_at).not.toBeNull();
});

it('counts exhausted deliveries exactly under concurrency, disabling at exactly 20', async () => {
  const { open, subscription } = await deliveries(24);
  const claimed = (await lifecycle.claim(
    ctx.deps.knex,
    open.map((d) => ({ deliveryId: d.id, round: 1, attempt: 1 })),
    LOCK_MS,
  )) as ClaimedDelivery[];
  const results = await Promise.all(
    claimed.map((c) =>
      lifecycle.exhaust(
        ctx.deps.knex,
        {
          delivery: c.delivery,
          statusCode: 500,
          error: 'http_5xx',
          durationMs: 1,
          excerpt: null,
          logAttempt: true,
        },
        20,
      ),
    ),
  );
  // Twenty count, one at a time; the twentieth disables the subscription and cancels the
  // four still open, whose exhaustion then changes nothing.
  const counted = results.filter((r) => r.moved);
  expect(counted.map((r) => r.consecutiveFailures).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
  const disabled = results.filter((r) => r.disabledNow);
  expect(disabled).toHaveLength(1);
  expect(disabled[0]).toMatchObject({ consecutiveFailures: 20, canceled: 4 });
  const sub = await ctx.deps.knex('webhook_subscriptions').where({ id: subscription.id }).first();
  expect(sub).toMatchObject({ is_active: false, consecutive_failures: 20 });
  const statuses = await ctx.deps
    .knex('webhook_deliveries')
    .where({ subscription_id: subscription.id })
    .pluck('status');
  expect(statuses.filter((x: string) => x === 'failed')).toHaveLength(20);
  expect(statuses.filter((x: string) => x === 'canceled')).toHaveLength(4);
  expect(sub.disabled_reason).toBe('consecutive_failures');
  // The same statements wrote the operational events, each level once, in the outbox.
  const ops = await ctx.deps
    .knex('events')
    .where({ tenant_id: sub.tenant_id })
    .whereIn('type', ['webhook.failing', 'webhook.disabled'])
    .select('id', 'type', 'data', 'receptionist_id');
  const failing = ops.filter((e) => e.type === 'webhook.failing');
  expect(failing.map((e) => e.data.consecutive_failures).sort()).toEqual([10, 15]);
  expect(failing[0]?.data).toMatchObject({
    subscription_id: subscription.id,
    disable_threshold: 20,
    last_status_code: 500,
    last_error: 'http_5xx',
  });
  const disabledEvents = ops.filter((e) => e.type === 'webhook.disabled');
  expect(disabledEvents).toHaveLength(1);
  expect(disabledEvents[0]?.data).toMatchObject({
    subscription_id: subscription.id,
    reason: 'consecutive_failures',
    pending_cancelled: 4,
  });
  expect(await ctx.deps.stores.events.pending(ops.map((e) => e.id))).toEqual(
    new Set(ops.map((e) => e.id)),
  );
  for (const e of ops) {
    expect(e.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(e).toMatchObject({ receptionist_id: null });
    expect(validateEventData(e.type, e.data)).toBeNull();
  }
});

it('counts an attempt whose delivery is canceled while its record waits for the row', async () => {
  const { open } = await deliveries(2);
  const claimed = (await lifecycle.claim(
    ctx.deps.knex,
    open.map((d) => ({ deliveryId: d.id, round: 1, attempt: 1 })),
    LOCK_MS,
  )) as ClaimedDelivery[];
  const [retried, exhausted] = claimed.map((c) => c.delivery);
  const base = { statusCode: 500, error: 'http_5xx', durationMs: 1, excerpt: null };
  // A cancel (as a disable does) holds both rows, uncommitted, while the attempts are
  // recorded: each record's statement waits for the row and then sees it canceled.
  const cancel = await ctx.deps.knex.transaction();
  await cancel('webhook_deliveries')
    .whereIn('id', [retried!.id, exhausted!.id])
    .update({ status: 'canceled', locked_until: null, completed_at: cancel.fn.now() });
  const recording = lifecycle.record(ctx.deps.knex, [
    {
      ...base,
      logAttempt: true,
      delivery: retried!,
      outcome: { kind: 'retry', nextAttemptAt: new Date(Date.now() + 60_000) },
    },
  ]);
  const exhausting = lifecycle.exhaust(
    ctx.deps.knex,
    { ...base, logAttempt: true, delivery: exhausted! },
    20,
  );
  await waitFor('both statements to wait for the cancel', async () => {
    const { rows } = await ctx.deps.knex.raw(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND datname = current_database()`,
    );
    return rows[0].n >= 2;
  });
  await cancel.commit();
  expect(await recording).toEqual([false]);
  expect((await exhausting).moved).toBe(false);
  const rows = await ctx.deps
    .knex('webhook_deliveries')
    .whereIn('id', [retried!.id, exhausted!.id])
    .select('status', 'attempts', 'last_status_code');
  expect(rows).toEqual([
    { status: 'canceled', attempts: 1, last_status_code: 500 },
    { status: 'canceled', attempts: 1, last_status_code: 500 },
  ]);
});

/** Every attempt listed for a delivery (rows and its latest), oldest first. */
const listedAttempts = async (id: string) =>
  (
    (await ctx.deps
      .knex('webhook_delivery_attempts_all')
      .where({ delivery_id: id })
      .orderBy(['attempted_at', 'round', 'attempt'])
      .select('round', 'attempt', 'status_code')) as Array<Record<string, number>>
  ).map((a) => [a.round, a.attempt, a.status_code]);

it('lists an attempt recorded twice once, the second record waiting for the first or not', async () => {
  const { open } = await deliveries(1);
  const claim = async (attempt: number) =>
    (
      (await lifecycle.claim(
        ctx.deps.knex,
        [{ deliveryId: open[0]!.id, round: 1, attempt }],
        LOCK_MS,
      )) as ClaimedDelivery[]
    )[0]!.delivery;
  const base = { error: null, durationMs: 2, excerpt: null, logAttempt: true };
  const first = await claim(1);
  expect(
    await lifecycle.record(ctx.deps.knex, [
      {
        ...base,
        statusCode: 503,
        delivery: first,
        outcome: { kind: 'retry', nextAttemptAt: new Date() },
      },
    ]),
  ).toEqual([true]);
  const second = await claim(2);
  const success: AttemptRecord = {
    ...base,
    statusCode: 200,
    delivery: second,
    outcome: { kind: 'succeeded' },
  };
  // A second record of attempt 2 (a claim that lapsed and was redone) waits for the first,
  // which holds the row uncommitted, then finds attempt 2 recorded: it moves nothing and
  // lists nothing more.
  const trx = await ctx.deps.knex.transaction();
  expect(await lifecycle.record(trx, [success])).toEqual([true]);
  const again = lifecycle.record(ctx.deps.knex, [success]);
  await waitFor('the second record to wait for the row', async () => {
    const { rows } = await ctx.deps.knex.raw(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND datname = current_database()`,
    );
    return rows[0].n >= 1;
  });
  await trx.commit();
  expect(await again).toEqual([false]);
  // And once more, after both committed.
  expect(await lifecycle.record(ctx.deps.knex, [success])).toEqual([false]);
  expect(await listedAttempts(first.id)).toEqual([
    [1, 1, 503],
    [1, 2, 200],
  ]);
  const row = await ctx.deps.knex('webhook_deliveries').where({ id: first.id }).first();
  expect(row).toMatchObject({ status: 'succeeded', attempts: 2 });
});

it('keeps an attempt a new round superseded in flight, and the old round listed', async () => {
  const { open, subscription } = await deliveries(1);
  const id = open[0]!.id;
  const claim = async (round: number) =>
    (
      (await lifecycle.claim(
        ctx.deps.knex,
        [{ deliveryId: id, round, attempt: 1 }],
        LOCK_MS,
      )) as ClaimedDelivery[]
    )[0]!.delivery;
  const record = (delivery: ClaimedDelivery['delivery'], statusCode: number) =>
    lifecycle.record(ctx.deps.knex, [
      {
        statusCode,
        error: null,
        durationMs: 2,
        excerpt: null,
        logAttempt: true,
        delivery,
        outcome: { kind: 'succeeded' },
      },
    ]);
  expect(await record(await claim(1), 200)).toEqual([true]);
  // A manual retry, and then another while the new round's first attempt is in flight: that
  // attempt moves nothing, but it was made, so it is listed.
  await lifecycle.newRound(ctx.deps.knex, subscription.id, id);
  const inFlight = await claim(2);
  await lifecycle.newRound(ctx.deps.knex, subscription.id, id);
  expect(await record(inFlight, 201)).toEqual([false]);
  expect(await record(await claim(3), 202)).toEqual([true]);
  expect(await listedAttempts(id)).toEqual([
    [1, 1, 200],
    [2, 1, 201],
    [3, 1, 202],
  ]);
  // The latest on the delivery row, the ones before it as rows.
  expect(
    await ctx.deps
      .knex('webhook_delivery_attempts')
      .where({ delivery_id: id })
      .orderBy('round')
      .select('round', 'attempt'),
  ).toEqual([
    { round: 1, attempt: 1 },
    { round: 2, attempt: 1 },
  ]);
});

it('keeps a first attempt a manual retry overtook in flight, listed in round 1', async () => {
  const { open, subscription } = await deliveries(1);
  const id = open[0]!.id;
  const [taken] = await lifecycle.claim(
    ctx.deps.knex,
    [{ deliveryId: id, round: 1, attempt: 1 }],
    LOCK_MS,
  );
  // The retry starts round 2 at once, whatever the claim.
  expect(await lifecycle.newRound(ctx.deps.knex, subscription.id, id)).toMatchObject({ round: 2 });
  const moved = await lifecycle.record(ctx.deps.knex, [
    {
      statusCode: 204,
      error: null,
      durationMs: 2,
      excerpt: null,
      logAttempt: true,
      delivery: taken!.delivery,
      outcome: { kind: 'succeeded' },
    },
  ]);
  expect(moved).toEqual([false]);
  expect(await listedAttempts(id)).toEqual([[1, 1, 204]]);
  expect(
    await ctx.deps.knex('webhook_deliveries').where({ id }).first('status', 'round', 'attempts'),
  ).toEqual({ status: 'pending', round: 2, attempts: 0 });
});
