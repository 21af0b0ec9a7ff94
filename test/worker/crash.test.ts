import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { TEST_WORKER_BUNDLE } from '../support/bundles';
import { createTestContext, type TestContext } from '../support/context';
import { testEnv } from '../support/env';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// At-least-once under crashes: 500 events are delivered while the worker process is
// SIGKILLed and restarted three times. Every event must reach the receiver, every delivery
// row must end final, and duplicates must carry the same event id.
const ROOT = path.resolve(__dirname, '../..');
const EVENTS = 500;
let ctx: TestContext;
let receiver: TestReceiver;
let certDir: string;
let worker: ChildProcess | null = null;

function startWorker(): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    // The test worker as the global setup compiled it: one process, which a SIGKILL ends.
    ['--enable-source-maps', TEST_WORKER_BUNDLE],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...testEnv({ DATABASE_URL: ctx.config.databaseUrl, QUEUE_PREFIX: ctx.config.queuePrefix }),
        NODE_EXTRA_CA_CERTS: path.join(certDir, 'ca.pem'),
        WORKER_CONCURRENCY: '20',
        // The receiver answers in 5 ms: a 3 s deadline is still 600 times that, and the claims
        // and lane slots of a killed worker lapse 3 s + CLAIM_MARGIN_MS after their claim
        // instead of 10 s + CLAIM_MARGIN_MS, so each recovery waits that much less.
        WEBHOOK_TIMEOUT_MS: '3000',
        // A parked delivery whose wake-up a kill lost waits out this safety delay instead of
        // 30 s; one that wakes while its lane is still full parks again.
        TEST_PARKED_DELAY_MS: '5000',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('worker ready')) {
        child.removeAllListeners('exit');
        resolve(child);
      }
    });
  });
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

beforeAll(async () => {
  const cert = generateCertificate('IP:127.0.0.1,DNS:localhost');
  certDir = mkdtempSync(path.join(tmpdir(), 'sb-crash-'));
  writeFileSync(path.join(certDir, 'ca.pem'), cert.cert);
  // A few milliseconds per request keep deliveries in flight when the worker is killed.
  receiver = await startReceiver(cert, {
    '/hook': (_req, res) => void setTimeout(() => res.writeHead(200).end(), 5),
  });
  ctx = await createTestContext();
});
afterAll(async () => {
  if (worker && worker.exitCode === null) await kill(worker);
  await Promise.all([ctx?.close(), receiver?.close()]);
  rmSync(certDir, { recursive: true, force: true });
});

it('delivers every event at least once across three SIGKILLs', async () => {
  const { tenant, receptionistId, subscription } = await subscriber(
    ctx,
    `https://127.0.0.1:${receiver.port}/hook`,
  );
  const eventIds: string[] = [];
  for (let batch = 0; batch < EVENTS / 50; batch++) {
    await ctx.deps.knex.transaction(async (trx) => {
      for (let i = 0; i < 50; i++) {
        eventIds.push(await emitCallStarted(ctx, tenant.tenantId, receptionistId, trx));
      }
    });
  }

  const distinct = () =>
    new Set(receiver.requests.map((r) => r.headers['x-service-event-id'])).size;
  worker = await startWorker();
  for (const threshold of [60, 180, 300]) {
    await waitFor(`${threshold} events received`, () => distinct() >= threshold, {
      timeoutMs: 60_000,
    });
    await kill(worker);
    worker = await startWorker();
  }
  await waitFor('every event received', () => distinct() === EVENTS, {
    timeoutMs: 90_000,
    intervalMs: 100,
  });
  await waitFor(
    'every delivery row final',
    async () => {
      const open = await ctx.deps
        .knex('webhook_deliveries')
        .whereNotIn('status', ['succeeded', 'failed', 'canceled']);
      return open.length === 0;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  const rows = await ctx.deps
    .knex('webhook_deliveries')
    .where({ subscription_id: subscription.id });
  expect(rows).toHaveLength(EVENTS);
  expect(rows.every((r: { status: string }) => r.status === 'succeeded')).toBe(true);
  // Duplicates are allowed (at-least-once) but always name the same event.
  for (const r of receiver.requests) {
    expect(r.headers['x-service-event-id']).toBe(JSON.parse(r.body).id);
  }
  expect(new Set(receiver.requests.map((r) => r.headers['x-service-event-id']))).toEqual(
    new Set(eventIds),
  );
}, 240_000);
