import type { IncomingMessage } from 'node:http';
import { emitMany } from '@switchboard/events';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { createTestContext, type TestContext } from '../support/context';
import {
  callStartedData,
  emitCallStarted,
  startTestWorker,
  subscriber,
  waitFor,
  type TestWorker,
} from '../support/worker';

// Issue 22, item 1, scaled down: tenant D emits a burst of events (an import would), each
// with a subscriber; tenant A then emits one. A's event must not wait for D's burst: it is
// delivered while most of the burst is still waiting. Judged by order, not by a clock: with
// one FIFO of event jobs, A's event is fanned out after every one of D's.
const BURST = 1000;
let ctx: TestContext;
let worker: TestWorker;
let receiver: TestReceiver;
/** The tenant of each receipt, in the order they reached the receiver. */
const receipts: string[] = [];

beforeAll(async () => {
  const cert = generateCertificate('IP:127.0.0.1');
  const record =
    (who: string) => (_req: IncomingMessage, res: import('node:http').ServerResponse) => {
      receipts.push(who);
      res.writeHead(204).end();
    };
  receiver = await startReceiver(cert, { '/d': record('D'), '/a': record('A') });
  ctx = await createTestContext({ WORKER_CONCURRENCY: '8' });
  worker = await startTestWorker(ctx, { webhookCa: cert.cert });
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await receiver?.close();
  await ctx?.close();
});

it("one tenant's burst of events does not delay another tenant's event", async () => {
  const base = `https://127.0.0.1:${receiver.port}`;
  const d = await subscriber(ctx, `${base}/d`, ['call.started']);
  const a = await subscriber(ctx, `${base}/a`, ['call.started']);

  // D's burst commits first (one import batch), then A's single event.
  await ctx.deps.knex.transaction((trx) =>
    emitMany(
      trx,
      Array.from({ length: BURST }, () => ({
        tenantId: d.tenant.tenantId,
        receptionistId: d.receptionistId,
        type: 'call.started' as const,
        data: callStartedData(),
      })),
    ),
  );
  const aEvent = await emitCallStarted(ctx, a.tenant.tenantId, a.receptionistId);

  await waitFor('A to receive its event', () => receipts.includes('A'), { timeoutMs: 120_000 });
  // The burst was real: D's deliveries went on after A's (and all of them arrive).
  await waitFor('D to receive its whole burst', () => receipts.length >= BURST + 1, {
    timeoutMs: 120_000,
  });
  // How many of D's events were fanned out before A's (a fan-out dates its deliveries with
  // its transaction's time): with one FIFO of event jobs, all of them; fairly, about one
  // window of event jobs (EVENTS_WINDOW, 200).
  const { rows } = (await ctx.deps.knex.raw(
    `SELECT count(DISTINCT event_id)::int AS n FROM webhook_deliveries
      WHERE tenant_id = ?
        AND created_at < (SELECT min(created_at) FROM webhook_deliveries WHERE event_id = ?)`,
    [d.tenant.tenantId, aEvent],
  )) as { rows: Array<{ n: number }> };
  const fannedOutBeforeA = rows[0]?.n as number;
  const receivedBeforeA = receipts.indexOf('A');
  expect({
    fannedOutBeforeA,
    receivedBeforeA,
    mostOfBurstAfterA: fannedOutBeforeA < BURST / 2,
  }).toMatchObject({ mostOfBurstAfterA: true });
}, 300_000);
