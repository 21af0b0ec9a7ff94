import { catalog, enqueue } from '@switchboard/queues';
import { createTestContext, type TestContext } from '../support/context';
import { startTestWorker, type TestWorker } from '../support/worker';

// The worker's /metrics: the depth of every queue of the job catalog, for the local scraper.
// It listens on loopback (127.0.0.1) unless METRICS_HOST says otherwise. 127.0.0.2 is another loopback address of this machine, so a
// server bound to every interface answers there and one bound to 127.0.0.1 does not.
let ctx: TestContext;
let worker: TestWorker | null = null;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterEach(async () => {
  await worker?.close();
  worker = null;
});
afterAll(() => ctx.close());

const scrape = (host: string, port: number) =>
  fetch(`http://${host}:${port}/metrics`).then(
    (r) => r.status,
    (err: Error & { cause?: { code?: string } }) => err.cause?.code ?? err.message,
  );

it('listens on 127.0.0.1 by default, not on every interface', async () => {
  worker = await startTestWorker(ctx, { runner: { metricsPort: 0 } });
  const port = worker.runner.metricsPort as number;
  expect(await scrape('127.0.0.1', port)).toBe(200);
  expect(await scrape('127.0.0.2', port)).toBe('ECONNREFUSED');
});

it('listens where METRICS_HOST says', async () => {
  worker = await startTestWorker(ctx, {
    runner: { metricsPort: 0 },
    config: { ...ctx.config, metricsHost: '127.0.0.2' },
  });
  const port = worker.runner.metricsPort as number;
  expect(await scrape('127.0.0.2', port)).toBe(200);
  expect(await scrape('127.0.0.1', port)).toBe('ECONNREFUSED');
});

it('reports the depth of every queue of the job catalog', async () => {
  // A job due in an hour: the lead-imports queue holds one delayed job while the test runs.
  await enqueue(ctx.queues, 'leadImports', [
    { data: { v: 1, importId: 'imp_metrics0delayed' }, opts: { delay: 3_600_000 } },
  ]);
  worker = await startTestWorker(ctx, { runner: { metricsPort: 0 } });
  const port = worker.runner.metricsPort as number;
  const body = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  const depth = (queue: string, state: string) =>
    new RegExp(`^switchboard_queue_jobs\\{queue="${queue}",state="${state}"\\} (\\d+)$`, 'm').exec(
      body,
    )?.[1];
  const queues = Object.values(catalog).map((job) => job.queue);
  expect(queues).toEqual(expect.arrayContaining(['deliveries', 'lead-imports', 'sms']));
  for (const queue of queues) {
    for (const state of ['waiting', 'active', 'delayed', 'failed']) {
      expect([queue, state, depth(queue, state)]).toEqual([queue, state, expect.any(String)]);
    }
  }
  expect(depth('lead-imports', 'delayed')).toBe('1');
});
