import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createApiMetrics } from '../../apps/api/src/metrics/registry';
import { createMetrics } from '../../apps/worker/src/metrics';
import { ROOT } from '../support/api-process';

// The example dashboard (docs/grafana/switchboard.json) queries only metrics the API or the
// worker declare, so a renamed metric cannot leave an empty panel behind.
const DASHBOARD = path.join(ROOT, 'docs', 'grafana', 'switchboard.json');

interface Panel {
  title?: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}

/** Every PromQL expression of the dashboard, rows' nested panels included. */
const expressions = (panels: Panel[]): string[] =>
  panels.flatMap((p) => [
    ...(p.targets ?? []).map((t) => t.expr ?? ''),
    ...expressions(p.panels ?? []),
  ]);

/** The names the registries declare; a histogram is queried as _bucket, _sum and _count. */
async function declared(): Promise<Set<string>> {
  const metrics = [
    ...(await createApiMetrics().registry.getMetricsAsJSON()),
    ...(await createMetrics().registry.getMetricsAsJSON()),
  ];
  return new Set(
    metrics.flatMap(({ name, type }) =>
      String(type) === 'histogram'
        ? [name, `${name}_bucket`, `${name}_sum`, `${name}_count`]
        : [name],
    ),
  );
}

test('every metric the dashboard queries is declared by the API or the worker', async () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
  const queried = new Set(
    expressions(dashboard.panels).flatMap((e) =>
      [...e.matchAll(/\bswitchboard_[a-z0-9_]+/g)].map((m) => m[0]),
    ),
  );
  expect(queried.size).toBeGreaterThan(20);
  const names = await declared();
  expect([...queried].filter((name) => !names.has(name))).toEqual([]);
});
