import request from 'supertest';
import { DeliveryLifecycle } from '@switchboard/db';
import type { WorkerDeps } from '../../apps/worker/src/deps';
import {
  startDialler,
  type DialRequest,
  type TelephonyProvider,
} from '../../apps/worker/src/dialler';
import type { Component } from '../../apps/worker/src/component';
import { createTestContext, type TestContext } from '../support/context';
import { quietWorkerDeps } from '../support/worker-deps';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { emitCallStarted, waitFor } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';
import { addJob } from '../support/jobs';

// Which worker writes commit durably and which asynchronously
// (docs/decisions/0036-durable-and-asynchronous-commits.md). The dial claim guards a phone call to
// a customer: it must survive a Postgres crash that comes right after the provider was asked to
// dial. The delivery hot path may lose its last writes in a crash (the reconciler redoes them) and
// must not wait for the WAL flush: that wait was most of a delivery's cost. The private cluster's
// WAL writer sleeps 10 s, so an asynchronous commit stays in Postgres' memory long enough to be
// seen, or lost in a crash.
let pg: PrivatePostgres;
let ctx: TestContext;
let deps: WorkerDeps;
let dialler: Component | null = null;
const dialled: string[] = [];
let crashed: () => void;
const crash = new Promise<void>((resolve) => (crashed = resolve));

/** Dials by crashing Postgres the first time (and restarting it), then by doing nothing. */
const crashingProvider: TelephonyProvider = {
  name: 'crashing',
  providerCallId: (callId) => `crash_${callId}`,
  async dial(req: DialRequest) {
    dialled.push(req.callId);
    if (dialled.length > 1) return;
    await pg.stop('immediate');
    await pg.start();
    crashed();
  },
  close: async () => undefined,
};

beforeAll(async () => {
  pg = await startPrivatePostgres({ settings: { wal_writer_delay: '10s' } });
  const url = await pg.createMigratedDatabase('switchboard');
  ctx = await createTestContext({ DATABASE_URL: url });
  deps = quietWorkerDeps(ctx.config);
}, 60_000);
afterAll(async () => {
  await dialler?.close();
  await deps?.close();
  await ctx?.close();
  await pg?.destroy();
});

it("the worker's connections commit durably by default", async () => {
  const { rows } = await deps.knex.raw<{ rows: Array<{ synchronous_commit: string }> }>(
    'SHOW synchronous_commit',
  );
  expect(rows[0]?.synchronous_commit).toBe('on');
});

it('a dial claim survives a Postgres crash right after the provider call', async () => {
  const { tenantId, rcp } = await receptionistTenant(ctx, { phoneNumber: '+14155550100' });
  const created = await ctx.deps.stores.calls.createOutbound({
    tenantId,
    receptionistId: rcp,
    to: '+14155550123',
    customerName: null,
    purpose: null,
    metadata: {},
    idempotency: null,
    at: new Date(),
  });
  const callId = created?.call.id as string;
  dialler = startDialler(deps, {
    provider: crashingProvider,
    reconcileIntervalMs: 250,
    reconcileGraceMs: 1000,
  });
  await addJob(ctx.queues, 'outboundCalls', { v: 1, callId });
  await crash;
  // After crash recovery the claim is still there: the call is not queued again...
  const row = await waitFor('the call row after recovery', () =>
    ctx.deps
      .knex('calls')
      .where({ id: callId })
      .first()
      .catch(() => undefined),
  );
  expect(row).toMatchObject({ status: 'ringing', provider_call_id: `crash_${callId}` });
  // ...so the reconciler, which re-dials queued calls after 1 s, never dials it again. The
  // signal that it had every chance: a later call is dialled through the reconciler too.
  const later = await ctx.deps.stores.calls.createOutbound({
    tenantId,
    receptionistId: rcp,
    to: '+14155550124',
    customerName: null,
    purpose: null,
    metadata: {},
    idempotency: null,
    at: new Date(Date.now() - 5_000),
  });
  await waitFor('the later call to be dialled by the reconciler', () =>
    dialled.includes(later?.call.id as string),
  );
  await waitFor('every dial job to be done', async () => {
    const counts = await ctx.queues.outboundCalls.getJobCounts('waiting', 'active', 'delayed');
    return Object.values(counts).every((n) => n === 0);
  });
  expect(dialled.filter((id) => id === callId)).toHaveLength(1);
  // Its reconciler writes now and then; the next test reads the WAL position of this server.
  await dialler.close();
  dialler = null;
}, 60_000);

it("the delivery hot path commits asynchronously: the relay's batch, claim, attempt record", async () => {
  const { tenantId, auth, rcp } = await receptionistTenant(ctx);
  const sub = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({ url: 'https://127.0.0.1:9/hook' });
  expect(sub.status).toBe(201);
  /** True while WAL was written that is not yet flushed: an asynchronous commit. */
  const walPending = async () =>
    (
      await deps.knex.raw<{ rows: Array<{ pending: boolean }> }>(
        'SELECT pg_current_wal_insert_lsn() > pg_current_wal_flush_lsn() AS pending',
      )
    ).rows[0]?.pending;
  /**
   * A durable commit flushes everything before it. Should anything still write in the
   * background, wait (bounded by the WAL writer's 10 s) until the flush position caught up.
   */
  const flush = async () => {
    await deps.knex('tenants').where({ id: tenantId }).update({ name: 'Flushed' });
    await waitFor('the WAL to be flushed', async () => (await walPending()) === false, {
      timeoutMs: 45_000,
    });
  };

  const lifecycle = new DeliveryLifecycle();
  // The relay's batch (the claim of outbox events and their fan-out, one statement, as
  // apps/worker/src/webhook-delivery/relay.ts runs it).
  const eventId = await emitCallStarted(ctx, tenantId, rcp);
  await flush();
  const batch = await lifecycle.publishNext(deps.knex, {
    after: '',
    otherRoom: 10,
    limit: 10,
    lockMs: 10_000,
  });
  const [made] = batch.made.filter((c) => c.delivery.tenantId === tenantId);
  expect(made?.delivery.eventId).toBe(eventId);
  expect(await walPending()).toBe(true);
  // Given back (as the relay does without room for it), then claimed by its delivery job.
  const id = made?.delivery.id as string;
  await lifecycle.release(deps.knex, [id], 0);
  await flush();
  const [claimed] = await lifecycle.claim(
    deps.knex,
    [{ deliveryId: id, round: 1, attempt: 1 }],
    10_000,
  );
  expect(claimed).toBeDefined();
  expect(await walPending()).toBe(true);
  await flush();
  const delivery = claimed?.delivery as NonNullable<typeof claimed>['delivery'];
  const attempt = { statusCode: 200, error: null, durationMs: 5, excerpt: 'ok', logAttempt: true };
  const outcome = { kind: 'succeeded' as const };
  expect(await lifecycle.record(deps.knex, [{ delivery, ...attempt, outcome }])).toEqual([true]);
  expect(await walPending()).toBe(true);
});
