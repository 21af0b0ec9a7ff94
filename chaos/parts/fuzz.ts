import { progressBar } from '../../bench/lib/progress';
import { createTestContext } from '../../test/support/context';
import { runFuzz } from '../../test/sweeps/fuzz';
import { servedOperations } from '../../test/sweeps/operations';
import { loopbackLookup } from '../../test/sweeps/requests';
import { buildWorld } from '../../test/sweeps/world';
import type { ChaosPart } from '../part';

const int = (name: string, fallback: number): number => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
};

/**
 * The fuzz campaign (test/sweeps): FUZZ_REQUESTS (default 10,000) requests generated from
 * every operation of the served OpenAPI document, FUZZ_SEED (default: a new one, printed, so
 * a run that found something can be replayed), 4 at a time against one API app on its own
 * database and Redis prefix. `npm test` runs a few hundred of the same requests.
 */
export const fuzzPart: ChaosPart = {
  description: 'requests generated from the OpenAPI document: no 5xx, no hang, as documented',
  async run({ log }) {
    const requests = int('FUZZ_REQUESTS', 10_000);
    const seed = int('FUZZ_SEED', Math.floor(Math.random() * 2 ** 31) + 1);
    log(`fuzz: ${requests} requests, seed ${seed} (FUZZ_SEED=${seed} replays this run)`);
    const ctx = await createTestContext({ LOG_LEVEL: 'silent' }, { webhookLookup: loopbackLookup });
    try {
      const world = await buildWorld(ctx);
      const { doc, operations } = await servedOperations(ctx.app);
      const bar = progressBar('fuzz', requests, 'requests');
      const report = await runFuzz({
        app: ctx.app,
        doc,
        operations,
        world,
        requests,
        seed,
        concurrency: 4,
        onProgress: (done) => bar.update(done),
      }).finally(() => bar.stop());
      const statuses = Object.entries(report.byStatus)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([status, n]) => `${status}×${n}`)
        .join(' ');
      const counts = Object.values(report.byOperation);
      return {
        figures: [
          ['requests', report.requests],
          ['seed', report.seed],
          ['operations covered', `${counts.length} of ${operations.length}`],
          ['requests per operation (min / max)', `${Math.min(...counts)} / ${Math.max(...counts)}`],
          ['duration', `${(report.durationMs / 1000).toFixed(1)} s`],
          ['throughput', `${((report.requests * 1000) / report.durationMs).toFixed(0)} requests/s`],
          ['latency p99 / max', `${report.p99Ms} ms / ${report.maxMs} ms`],
          ['statuses', statuses],
          [
            '5xx',
            Object.entries(report.byStatus)
              .filter(([s]) => Number(s) >= 500)
              .reduce((sum, [, n]) => sum + n, 0),
          ],
          ['findings', report.findings.length],
        ],
        problems: report.findings.map(
          (f) => `${f.operationId}: ${f.problem}\n    ${f.request}\n    → ${f.status} ${f.body}`,
        ),
      };
    } finally {
      await ctx.close();
    }
  },
};
