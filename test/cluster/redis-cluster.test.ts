import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import IORedis from 'ioredis';
import { closeQueues, createQueues, createRedis, eachMaster } from '@switchboard/queues';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { exited } from '../support/children';
import { createTestContext, type TestContext } from '../support/context';
import { messages, uid } from '../support/fixtures';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster';
import { waitFor } from '../support/worker';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { receptionistTenant } from '../support/receptionist';

// The scale-out path (docs/SCALING.md, "Running on a Redis Cluster"): a private 3-master Redis Cluster,
// a real API process and two worker processes on it with the default hash-tagged prefix
// {sb}. Calls are ingested and every event must reach an HTTPS receiver; an outbound call
// with an Idempotency-Key is replayed and dialled; afterwards every key in the cluster must
// be under {sb}, on the one master that owns its slot.
const PREFIX = '{sb}';
const CALLS = 20;

let cluster: TestRedisCluster;
let ctx: TestContext;
let receiver: TestReceiver;
let certDir: string;
let api: ApiProcess;
let workers: WorkerProcess[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
  const cert = generateCertificate('IP:127.0.0.1,DNS:localhost');
  certDir = mkdtempSync(path.join(tmpdir(), 'sb-cluster-ca-'));
  writeFileSync(path.join(certDir, 'ca.pem'), cert.cert);
  receiver = await startReceiver(cert, { '/hook': (_req, res) => res.writeHead(200).end() });
  ctx = await createTestContext({
    REDIS_URL: '',
    REDIS_CLUSTER_NODES: cluster.seeds,
    QUEUE_PREFIX: PREFIX,
  });
  const workerEnv = {
    NODE_EXTRA_CA_CERTS: path.join(certDir, 'ca.pem'),
    SIMULATOR_SPEED: '1000',
  };
  [api, ...workers] = await Promise.all([
    startApiProcess(ctx.config),
    startWorkerProcess(ctx.config, workerEnv),
    startWorkerProcess(ctx.config, workerEnv),
  ]);
}, 90_000);

afterAll(async () => {
  // The last test took a master away: the workers could only wait out their drain deadline.
  await Promise.allSettled([api?.stop(), ...workers.map((w) => w.kill())]);
  await ctx?.close();
  await receiver?.close();
  await cluster?.stop();
  if (certDir) rmSync(certDir, { recursive: true, force: true });
}, 90_000);

const call = (
  route: string,
  init: { method?: string; auth: string; body?: object; key?: string },
) =>
  fetch(`${api.baseUrl}${route}`, {
    method: init.method ?? 'POST',
    headers: {
      Authorization: init.auth,
      'Content-Type': 'application/json',
      ...(init.key ? { 'Idempotency-Key': init.key } : {}),
    },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });

it('is ready on the cluster (config, /readyz, both workers attached)', async () => {
  expect(ctx.config.redis.mode).toBe('cluster');
  // Ready once its cluster client has the slot map (a fresh process may still be fetching it).
  const ready = await waitFor(
    '/readyz to answer 200',
    async () => {
      const res = await fetch(`${api.baseUrl}/readyz`);
      return res.status === 200 ? res : undefined;
    },
    { timeoutMs: 45_000, intervalMs: 100 },
  );
  expect(await ready.json()).toMatchObject({ redis: 'ok' });
  // Each worker process holds a blocking connection on every queue of the catalog.
  await waitFor('two workers on the deliveries queue', async () => {
    const attached = await ctx.queues.deliveries.getWorkers();
    return attached.length >= 2;
  });
});

it('delivers every event of ingested and outbound calls end to end', async () => {
  const { tenantId, auth, rcp } = await receptionistTenant(ctx, { phoneNumber: '+14155550199' });
  const sub = await call('/api/v1/webhooks', {
    auth,
    body: { url: `https://127.0.0.1:${receiver.port}/hook` },
  });
  expect(sub.status).toBe(201);

  const ingestAuth = `Bearer ${ctx.config.ingestToken}`;
  for (let i = 0; i < CALLS; i++) {
    const providerCallId = `pc_${uid()}`;
    const start = new Date(Date.now() - 60_000).toISOString();
    for (const msg of [
      messages.started(rcp, providerCallId, start),
      messages.ended(rcp, providerCallId, start, new Date().toISOString()),
    ]) {
      const res = await call('/internal/v1/telephony/events', { auth: ingestAuth, body: msg });
      expect(res.status).toBe(202);
    }
  }

  // An outbound call with an Idempotency-Key: the entry lives in the cluster; the retry
  // replays the first answer; a worker dials the call through the cluster's queue.
  const key = `cluster-${uid()}`;
  const body = { receptionist_id: rcp, to: '+14155550123', customer_name: 'Dana Whitfield' };
  const first = await call('/api/v1/calls/outbound', { auth, body, key });
  expect(first.status).toBe(202);
  const created = (await first.json()) as { id: string };
  const replay = await call('/api/v1/calls/outbound', { auth, body, key });
  expect(replay.status).toBe(202);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(((await replay.json()) as { id: string }).id).toBe(created.id);

  const delivered = () =>
    new Set(receiver.requests.map((r) => String(r.headers['x-service-event-id'])));
  const committed = await waitFor(
    'every committed event delivered, the outbound call completed among them',
    async () => {
      const outbound = await ctx.deps.knex('calls').where({ id: created.id }).first();
      if (outbound?.status !== 'completed') return false;
      const rows: Array<{ id: string; type: string }> = await ctx.deps
        .knex('events')
        .where({ tenant_id: tenantId })
        .select('id', 'type');
      const seen = delivered();
      return rows.every((r) => seen.has(r.id)) && rows;
    },
    { timeoutMs: 45_000, intervalMs: 100 },
  );
  // 2 events per ingested call, call.started and call.completed for the outbound one.
  expect(committed.filter((e) => e.type === 'call.completed')).toHaveLength(CALLS + 1);
  expect(committed.length).toBeGreaterThanOrEqual(2 * CALLS + 2);
  for (const r of receiver.requests) {
    expect(r.headers['x-service-event-id']).toBe(JSON.parse(r.body).id);
  }
  const calls = await ctx.deps.knex('calls').where({ tenant_id: tenantId, direction: 'outbound' });
  expect(calls).toHaveLength(1);
}, 90_000);

it('sends a campaign, its rate counted in the cluster', async () => {
  const { auth, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    name: 'Campaigns',
    phoneNumber: '+14155550198',
  });
  // One a minute: the limiter's window (and its key) lasts a minute, for the next test.
  const res = await call('/api/v1/campaigns', {
    auth,
    body: {
      name: 'Cluster',
      receptionist_id: rcp,
      message: 'Hello from the cluster',
      recipients: { phones: ['+14155550123'] },
      send_rate_per_minute: 1,
    },
  });
  expect(res.status).toBe(202);
  const { id } = (await res.json()) as { id: string };
  const done = await waitFor(
    'the campaign completed',
    async () => {
      const c = await ctx.deps.stores.campaigns.findById(ctx.deps.knex, id);
      return c?.status === 'completed' && c;
    },
    { timeoutMs: 45_000, intervalMs: 100 },
  );
  expect(done).toMatchObject({ recipients: 1, sent: 1 });
}, 90_000);

it('keeps every key of the deployment under {sb}, on the one master that owns its slot', async () => {
  const keysByMaster = await Promise.all(
    eachMaster(ctx.deps.redis).map(async (node) => ({
      port: node.options.port,
      keys: await scanAll(node),
    })),
  );
  const holding = keysByMaster.filter((m) => m.keys.length > 0);
  expect(holding).toHaveLength(1);
  const keys = holding[0]?.keys ?? [];
  expect(keys.filter((k) => !k.startsWith(`${PREFIX}:`))).toEqual([]);
  // Queues of the catalog and the idempotency entry are among them.
  expect(keys.some((k) => k.startsWith(`${PREFIX}:deliveries:`))).toBe(true);
  expect(keys.some((k) => k.startsWith(`${PREFIX}:idem:`))).toBe(true);
  expect(keys.some((k) => k.startsWith(`${PREFIX}:campaign-rate:`))).toBe(true);
  // That master is the one the cluster routes the prefix's slot to.
  const probe = new IORedis({ host: '127.0.0.1', port: holding[0]?.port ?? 0 });
  try {
    const slot = await probe.cluster('KEYSLOT', PREFIX);
    const slots = await probe.cluster('SLOTS');
    const owner = slots.find(([from, to]) => slot >= from && slot <= to);
    expect(owner?.[2]?.[1]).toBe(holding[0]?.port);
  } finally {
    probe.disconnect();
  }
});

it('closes producers cleanly while they are still starting (a SIGTERM right after boot)', async () => {
  // Each round closes at another moment of the start-up (slot map, ready check, version
  // check); an 'error' emitted after BullMQ dropped its listeners would fail this test.
  for (const ms of [0, 2, 5, 10, 15, 20, 30, 50]) {
    const redis = createRedis(ctx.config.redis, 'producer');
    const queues = createQueues(redis, PREFIX);
    await new Promise((r) => setTimeout(r, ms));
    await closeQueues(queues, redis);
  }
  // Unhandled errors surface asynchronously: a later round trip on a live connection
  // proves the event loop went on past every close.
  expect(await fetch(`${api.baseUrl}/readyz`).then((r) => r.status)).toBe(200);
});

it('answers 503 with Retry-After, never hangs, once the master of the slot is gone', async () => {
  const probe = new IORedis({ host: '127.0.0.1', port: cluster.nodes[0]?.port ?? 0 });
  let ownerPort: number | undefined;
  try {
    const slot = await probe.cluster('KEYSLOT', PREFIX);
    const slots = await probe.cluster('SLOTS');
    ownerPort = slots.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1];
  } finally {
    probe.disconnect();
  }
  const owner = cluster.nodes.find((n) => n.port === ownerPort);
  if (!owner) throw new Error('no master owns the prefix slot');
  owner.process.kill('SIGKILL');
  await exited(owner.process);

  const { auth, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: '+14155550198',
  });
  // A hung request fails the test through the abort; a 500 fails it through the status.
  const ready = await fetch(`${api.baseUrl}/readyz`, { signal: AbortSignal.timeout(8000) });
  expect(ready.status).toBe(503);
  expect(ready.headers.get('retry-after')).toBeTruthy();
  const keyed = await fetch(`${api.baseUrl}/api/v1/calls/outbound`, {
    method: 'POST',
    headers: { Authorization: auth, 'Content-Type': 'application/json', 'Idempotency-Key': uid() },
    body: JSON.stringify({ receptionist_id: rcp, to: '+14155550123' }),
    signal: AbortSignal.timeout(8000),
  });
  expect(keyed.status).toBe(503);
  expect(keyed.headers.get('retry-after')).toBeTruthy();
  expect(((await keyed.json()) as { error: { type: string } }).error.type).toBe(
    'service_unavailable',
  );
});

async function scanAll(node: IORedis): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await node.scan(cursor, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}
