import { createTestContext, type TestContext } from '../support/context';
import { runFuzz, type FuzzReport } from './fuzz';
import { servedOperations, type OpenApiDoc, type Operation } from './operations';
import { loopbackLookup } from './requests';
import { buildWorld, type World } from './world';

// The reduced fuzz run of `npm run chaos:fuzz` (docs/RELIABILITY.md): requests generated
// from every operation of the served OpenAPI document, valid-ish and hostile, seeded so a
// failure replays. Every answer: no 5xx, no hang, a documented status, the contract's error
// body, the documented success body. FUZZ_REQUESTS and FUZZ_SEED change the run.
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 400);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

/** One example of each kind of finding (operation and problem), for a readable failure. */
const distinct = (report: FuzzReport): string[] => {
  const seen = new Map<string, string>();
  for (const f of report.findings) {
    const kind = `${f.operationId}: ${f.problem.split(':')[0]}`;
    if (!seen.has(kind))
      seen.set(kind, `${f.operationId}: ${f.problem}\n  ${f.request}\n  → ${f.status} ${f.body}`);
  }
  return [...seen.values()];
};

let ctx: TestContext;
let world: World;
let doc: OpenApiDoc;
let operations: Operation[];

beforeAll(async () => {
  ctx = await createTestContext({}, { webhookLookup: loopbackLookup });
  world = await buildWorld(ctx);
  ({ doc, operations } = await servedOperations(ctx.app));
}, 60_000);
afterAll(() => ctx?.close());

it(`${REQUESTS} generated requests (seed ${SEED}): no 5xx, no hang, every answer as documented`, async () => {
  const report: FuzzReport = await runFuzz({
    app: ctx.app,
    doc,
    operations,
    world,
    requests: REQUESTS,
    seed: SEED,
    concurrency: 2,
  });
  expect(distinct(report)).toEqual([]);
  // Every operation of the document was reached, with answers beyond validation errors.
  expect(Object.keys(report.byOperation).sort()).toEqual(
    operations.map((o) => o.operationId).sort(),
  );
  expect(Object.keys(report.byStatus)).toEqual(expect.arrayContaining(['200', '400', '404']));
}, 120_000);
