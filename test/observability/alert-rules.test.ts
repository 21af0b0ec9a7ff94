import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { serveMetrics } from '@switchboard/telemetry';
import { ROOT } from '../support/api-process';
import { createTestContext, type TestContext } from '../support/context';
import { startTestWorker, type TestWorker } from '../support/worker';

// The example alert rules of docs/OPERATIONS.md are valid Prometheus rules (promtool, the
// rule checker of Prometheus itself) and name only metrics the API or the worker serve.
const RULES = path.join(ROOT, 'docs', 'prometheus', 'alerts.yml');

let ctx: TestContext;
let worker: TestWorker;
let api: Server;
let promtool: string;
/** The /metrics text of the API and of the worker, fetched over HTTP as Prometheus would. */
let scraped: { api: string; worker: string };

beforeAll(async () => {
  promtool = execFileSync('bash', [path.join(ROOT, 'scripts', 'ensure-promtool.sh')], {
    encoding: 'utf8',
  }).trim();
  ctx = await createTestContext();
  worker = await startTestWorker(ctx, { runner: { metricsPort: 0 } });
  api = await serveMetrics(ctx.deps.metrics.registry, { host: '127.0.0.1', port: 0 });
  const get = (port: number) => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  scraped = {
    api: await get((api.address() as { port: number }).port),
    worker: await get(worker.runner.metricsPort as number),
  };
}, 120_000);
afterAll(async () => {
  await new Promise((r) => api?.close(r));
  await worker?.close();
  await ctx?.close();
});

/** Metric families a scrape declares (`# TYPE name type`), with their types. */
const families = (text: string) =>
  new Map(
    [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]),
  );

test('promtool accepts the rules', () => {
  const check = spawnSync(promtool, ['check', 'rules', RULES], { encoding: 'utf8' });
  expect(check.stderr).toBe('');
  expect(check.stdout).toMatch(/SUCCESS: \d+ rules found/);
  expect(check.status).toBe(0);
});

test('every metric the rules name is served by the API or the worker', () => {
  const served = new Map([...families(scraped.api), ...families(scraped.worker)]);
  const named = new Set(
    [...readFileSync(RULES, 'utf8').matchAll(/\bswitchboard_[a-z0-9_]+/g)].map((m) => m[0]),
  );
  expect(named.size).toBeGreaterThan(5);
  for (const name of named) {
    // A histogram is one family; PromQL names its series _bucket, _sum and _count.
    const base = name.replace(/_(bucket|sum|count)$/, '');
    const type = served.get(name) ?? (served.get(base) === 'histogram' ? 'histogram' : undefined);
    expect([name, type]).toEqual([name, expect.any(String)]);
  }
});

test('the metrics follow the Prometheus naming conventions (promtool check metrics)', () => {
  for (const [process, text] of Object.entries(scraped)) {
    const lint = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // prom-client's default Node.js gauges (…_nodejs_active_handles_total) are named by it.
    const problems = (lint.stdout + lint.stderr)
      .split('\n')
      .filter((line) => line.trim() && !/^switchboard_(api|worker)_nodejs_\S+_total /.test(line));
    expect([process, problems]).toEqual([process, []]);
  }
});
