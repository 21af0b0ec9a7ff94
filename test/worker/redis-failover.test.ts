import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { catalog } from '@switchboard/queues';
import { idempotencyRedisKey } from '../../apps/api/src/idempotency';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { createTestContext, type TestContext } from '../support/context';
import { uid } from '../support/fixtures';
import { receptionistTenant, type ReceptionistTenant } from '../support/receptionist';
import { startSentinelSet, type TestSentinelSet } from '../support/redis-sentinel';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

// A Redis failover under a running API and worker (docs/OPERATIONS.md, "Redis failover:
// Sentinel"): a private Sentinel set (one primary, two replicas, three Sentinels), both processes
// on it through REDIS_SENTINELS, the primary SIGKILLed. Replication is asynchronous, so a
// failover may drop the last writes before the crash; the test drops them itself on the promoted
// replica (whether or not they made it there), which is the worst a failover can do:
// - a queued delivery job (a retry, delayed ten minutes): rebuilt from Postgres by the
//   reconciler once its row is due, and delivered;
// - an Idempotency-Key entry: the retry is answered from Postgres, no second call.
// No process is restarted. No wall-clock bound: every wait detects a hang only.
const RETRY_AFTER_MS = 600_000;

let set: TestSentinelSet;
let ctx: TestContext;
let receiver: TestReceiver;
let certDir: string;
let api: ApiProcess;
let worker: WorkerProcess;
/** Requests per event id: the first of each event is refused (500), later ones accepted. */
const seen = new Map<string, number>();

beforeAll(async () => {
  set = await startSentinelSet();
  const cert = generateCertificate('IP:127.0.0.1,DNS:localhost');
  certDir = mkdtempSync(path.join(tmpdir(), 'sb-sentinel-ca-'));
  writeFileSync(path.join(certDir, 'ca.pem'), cert.cert);
  receiver = await startReceiver(cert, {
    '/hook': (req, res) => {
      const id = String(req.headers['x-service-event-id']);
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      res.writeHead(n === 1 ? 500 : 200).end();
    },
  });
  const env = { ...set.env, WEBHOOK_RETRY_BACKOFF_MS: String(RETRY_AFTER_MS) };
  ctx = await createTestContext(env);
  [api, worker] = await Promise.all([
    startApiProcess(ctx.config),
    startWorkerProcess(ctx.config, {
      ...env,
      NODE_EXTRA_CA_CERTS: path.join(certDir, 'ca.pem'),
      SIMULATOR_SPEED: '1000',
      // Its warnings, for the failure message of the wait that rebuilds the job.
      LOG_LEVEL: 'warn',
    }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([api?.stop(), worker?.stop()]);
  await ctx?.close();
  await receiver?.close();
  await set?.stop();
  if (certDir) rmSync(certDir, { recursive: true, force: true });
}, 90_000);

const outbound = (t: ReceptionistTenant, key: string) =>
  fetch(`${api.baseUrl}/api/v1/calls/outbound`, {
    method: 'POST',
    headers: { Authorization: t.auth, 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify({ receptionist_id: t.rcp, to: '+14155550123', customer_name: 'Dana' }),
    signal: AbortSignal.timeout(10_000),
  });
const callsOf = (tenantId: string) =>
  ctx.deps.knex('calls').where({ tenant_id: tenantId, direction: 'outbound' });
const deliveryOf = (eventId: string) =>
  ctx.deps.knex('webhook_deliveries').where({ event_id: eventId }).first();

it('follows the primary through a failover: API and worker write again without a restart', async () => {
  expect(ctx.config.redis.mode).toBe('sentinel');

  // Before the failover: a delivery whose first attempt failed waits for its retry in a
  // delayed job, and an outbound call's Idempotency-Key entry is in Redis.
  const sub = await subscriber(ctx, `https://127.0.0.1:${receiver.port}/hook`);
  const eventId = await emitCallStarted(ctx, sub.tenant.tenantId, sub.receptionistId);
  const failedOnce = await waitFor(
    'the first attempt to fail and a retry to be planned',
    async () => {
      const row = await deliveryOf(eventId);
      return row?.status === 'pending' && row.attempts === 1 && row;
    },
  );
  const retryJobId = catalog.deliveries.jobId({
    v: 1,
    deliveryId: failedOnce.id,
    round: 1,
    attempt: 2,
  });
  // The worker adds the retry's job after the attempt's record commits (deliver.ts): the row
  // says pending before the job exists, so wait for the job too.
  await waitFor('the retry job delayed in Redis', async () => {
    const job = await ctx.queues.deliveries.getJob(retryJobId);
    return (await job?.getState()) === 'delayed';
  });

  const caller = await receptionistTenant(ctx, { scopes: ['write'], phoneNumber: '+14155550198' });
  const key = `failover-${uid()}`;
  const first = await outbound(caller, key);
  expect(first.status).toBe(202);
  const firstBody = (await first.json()) as { id: string };
  const marker = idempotencyRedisKey(ctx.config.queuePrefix, caller.tenantId, key);
  expect(await ctx.redis.exists(marker)).toBe(1);

  // The failover.
  const old = await set.killPrimary();
  const promoted = await set.waitForNewPrimary(old);
  expect(promoted).not.toBe(old);

  // (1) A keyed write through the API succeeds again (503 while no primary answers, never
  // anything else), and the worker dials it through the promoted primary's queue.
  const after = await waitFor(
    'the API to accept a write again',
    async () => {
      const res = await outbound(caller, `after-${uid()}`).catch(() => null);
      if (res && res.status !== 202 && res.status !== 503)
        throw new Error(`unexpected ${res.status}: ${await res.text()}`);
      return res?.status === 202 && ((await res.json()) as { id: string });
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  await waitFor('the worker to dial the call made after the failover', async () => {
    const call = await ctx.deps.knex('calls').where({ id: after.id }).first();
    return call?.status === 'completed';
  });
  expect((await fetch(`${api.baseUrl}/readyz`)).status).toBe(200);

  // (2) The retry's job is gone, as the failover may have lost it; the row still waits.
  await (await ctx.queues.deliveries.getJob(retryJobId))?.remove();
  expect(await ctx.queues.deliveries.getJob(retryJobId)).toBeUndefined();
  expect(await deliveryOf(eventId)).toMatchObject({ status: 'pending', attempts: 1 });
  // Its time comes (as if the ten minutes had passed): only the row says so.
  await ctx.deps
    .knex('webhook_deliveries')
    .where({ id: failedOnce.id })
    .update({ next_attempt_at: ctx.deps.knex.raw("now() - interval '1 minute'") });
  const delivered = await waitFor('the reconciler to rebuild the job and deliver', async () => {
    const row = await deliveryOf(eventId);
    return row?.status === 'succeeded' && row;
  }).catch(async (err: Error) => {
    // What to start from if it hangs: the row, the job the reconciler should have added, the
    // requests the receiver saw, the worker's warnings.
    const job = await ctx.queues.deliveries.getJob(retryJobId);
    const state = job ? await job.getState() : 'none';
    throw new Error(
      `${err.message}\nrow: ${JSON.stringify(await deliveryOf(eventId))}\njob ${retryJobId}: ` +
        `${state}\nrequests for the event: ${seen.get(eventId) ?? 0}\n` +
        `worker output:\n${worker.output()}`,
    );
  });
  expect(delivered.attempts).toBe(2);
  expect(seen.get(eventId)).toBe(2);

  // (3) The Idempotency-Key entry is gone too: the retry is answered from Postgres, with
  // the call the first request made, and no second call is made.
  await ctx.redis.del(marker);
  const replay = await outbound(caller, key);
  expect(replay.status).toBe(202);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(await replay.json()).toEqual(firstBody);
  const calls = await callsOf(caller.tenantId);
  expect(calls.map((c: { id: string }) => c.id).sort()).toEqual([firstBody.id, after.id].sort());

  // Neither process was restarted.
  expect(worker.process.exitCode).toBeNull();
  expect(api.stderr()).not.toMatch(/unhandled error/);
}, 180_000);
