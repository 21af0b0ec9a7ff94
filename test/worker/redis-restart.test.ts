import { spawn, type ChildProcess } from 'node:child_process';
import {
  closedPort,
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { createTestContext, type TestContext } from '../support/context';
import {
  emitCallStarted,
  startTestWorker,
  subscriber,
  waitFor,
  type TestWorker,
} from '../support/worker';

// A Redis outage longer than BullMQ's drainDelay (5 s) must not leave the worker idle once
// Redis is back: a class of BullMQ bugs did exactly that. This test runs a Redis server of
// its own (the shared one is never stopped) and restarts it under a running worker.
let port: number;
let redis: ChildProcess | null = null;
let ctx: TestContext;
let worker: TestWorker;
let receiver: TestReceiver;

async function startRedis(): Promise<void> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Ready to accept connections')) resolve();
    });
  });
  redis = child;
}

async function stopRedis(): Promise<void> {
  const child = redis;
  if (!child || child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

beforeAll(async () => {
  port = await closedPort();
  await startRedis();
  const cert = generateCertificate('IP:127.0.0.1,DNS:localhost');
  receiver = await startReceiver(cert, { '/hook': (_q, res) => res.writeHead(200).end() });
  ctx = await createTestContext({ REDIS_URL: `redis://127.0.0.1:${port}` });
  worker = await startTestWorker(ctx, { webhookCa: cert.cert });
});
afterAll(async () => {
  await worker?.close();
  await ctx?.close();
  await receiver?.close();
  await stopRedis();
});

it('consumes new jobs again after Redis was away longer than drainDelay', async () => {
  const { tenant, receptionistId } = await subscriber(
    ctx,
    `https://127.0.0.1:${receiver.port}/hook`,
  );
  const emitOne = () => emitCallStarted(ctx, tenant.tenantId, receptionistId);
  const seen = (id: string) =>
    receiver.requests.some((r) => r.headers['x-service-event-id'] === id);

  const before = await emitOne();
  await waitFor('delivery before the outage', () => seen(before));

  await stopRedis();
  // Events keep being committed while Redis is away: Postgres is the source of truth.
  const during = await emitOne();
  await new Promise((r) => setTimeout(r, 8000));
  await startRedis();

  const after = await emitOne();
  await waitFor('delivery of the event committed after the restart', () => seen(after), {
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  await waitFor('delivery of the event committed during the outage', () => seen(during), {
    timeoutMs: 30_000,
    intervalMs: 100,
  });
}, 90_000);
