import { randomBytes, randomUUID } from 'node:crypto';
import { createTestContext, type TestContext } from '../support/context';
import { label, servedOperations, type Operation } from './operations';
import { exampleRequest, FIELD_ID_KINDS, loopbackLookup, send, snapshot } from './requests';
import { buildWorld, PATH_ID_KINDS, type World } from './world';

// Tenant isolation, swept over every operation of the served OpenAPI document (contract,
// section 2): another tenant's real id, in a path, a query filter or a body, is a 404 that
// cannot be told from a missing id's, and it changes nothing (row counts of every table,
// the events outbox included, and every row of the other tenant). New operations are swept
// the day they are declared; one whose path names a resource this file cannot make fails
// the first test below, which says what to add.
let ctx: TestContext;
let world: World;
let operations: Operation[];

beforeAll(async () => {
  ctx = await createTestContext({}, { webhookLookup: loopbackLookup });
  world = await buildWorld(ctx);
  ({ operations } = await servedOperations(ctx.app));
  // Destructive operations last, so the own-id checks of the others find their resources.
  operations.sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
}, 60_000);
afterAll(() => ctx?.close());

/** An id of the same shape that names nothing. */
const missingLike = (id: string): string =>
  /^[0-9a-f-]{36}$/i.test(id)
    ? randomUUID()
    : id.replace(/_[A-Za-z0-9]+$/, `_${randomBytes(16).toString('hex')}`);

const withPathIds = (op: Operation) => op.pathParams.length > 0;

it('knows how to make a foreign id for every operation with a path id', () => {
  const missing = operations
    .filter(withPathIds)
    .filter((op) => op.pathParams.some((p) => !PATH_ID_KINDS[op.operationId]?.[p.name]))
    .map(
      (op) =>
        `${label(op)} names {${op.pathParams.map((p) => p.name).join(', ')}} in its path, but ` +
        `PATH_ID_KINDS in test/sweeps/world.ts does not say what kind of resource that is. ` +
        `Add e.g. ${op.operationId}: { ${op.pathParams.map((p) => `${p.name}: '<kind>'`).join(', ')} }, ` +
        `and, for a kind of resource that is new, how to make one in CREATORS (same file).`,
    );
  if (missing.length) throw new Error(missing.join('\n'));
  const served = new Set(operations.map((op) => op.operationId));
  expect(Object.keys(PATH_ID_KINDS).filter((id) => !served.has(id))).toEqual([]);
});

/** The operation with `tweak`'s foreign ids: 404, the same answer as a missing id, no change. */
async function expectInvisible(
  op: Operation,
  foreign: Parameters<typeof exampleRequest>,
  missing: Parameters<typeof exampleRequest>,
) {
  const before = await snapshot(ctx.deps.knex, world.foreign.tenantId);
  const res = await send(ctx.app, exampleRequest(...foreign));
  expect([label(op), res.status]).toEqual([label(op), 404]);
  expect(await snapshot(ctx.deps.knex, world.foreign.tenantId)).toEqual(before);
  const absent = await send(ctx.app, exampleRequest(...missing));
  expect([label(op), absent.status, absent.body.error]).toEqual([label(op), 404, res.body.error]);
}

describe('another tenant’s id in the path', () => {
  it('is a 404 like a missing id, and changes nothing, for every such operation', async () => {
    const swept: string[] = [];
    for (const op of operations.filter(withPathIds)) {
      const key = world.own.keys.admin;
      const ids = (tenant: typeof world.foreign) =>
        Object.fromEntries(
          op.pathParams.map((p) => [p.name, tenant.ids[PATH_ID_KINDS[op.operationId]![p.name]!]]),
        );
      const absent = Object.fromEntries(
        Object.entries(ids(world.foreign)).map(([k, v]) => [k, missingLike(v)]),
      );
      await expectInvisible(
        op,
        [op, key, world.foreign, world.own],
        [op, key, world.foreign, world.own, absent],
      );
      // A portal token of the caller's tenant sees no more of the other tenant.
      if (op.portal) {
        const token = world.own.portal.full;
        await expectInvisible(
          op,
          [op, token, world.foreign, world.own],
          [op, token, world.foreign, world.own, absent],
        );
      }
      // The same request with the caller's own ids is served: the 404 above is isolation,
      // not a request the sweep got wrong.
      const own = await send(ctx.app, exampleRequest(op, key, world.own));
      expect([label(op), own.status, [400, 404].includes(own.status)]).toEqual([
        label(op),
        own.status,
        false,
      ]);
      swept.push(op.operationId);
    }
    expect(swept).toEqual(expect.arrayContaining(Object.keys(PATH_ID_KINDS)));
  }, 120_000);
});

describe('another tenant’s id in a query filter or a body field', () => {
  const fieldsOf = (op: Operation): string[] => [
    ...op.query.filter((q) => FIELD_ID_KINDS[q.name]).map((q) => q.name),
    ...Object.keys(
      op.body?.contentType === 'application/json' && op.body.example !== null
        ? (op.body.example as object)
        : {},
    ).filter((k) => FIELD_ID_KINDS[k]),
  ];

  it('is a 404 like a missing id, and changes nothing', async () => {
    const swept = operations.filter((op) => fieldsOf(op).length > 0);
    // At least the call list's filter and the bodies of outbound calls and SMS.
    expect(swept.map((op) => op.operationId)).toEqual(
      expect.arrayContaining(['listCalls', 'startOutboundCall', 'sendSms']),
    );
    const absentTenant = {
      ...world.foreign,
      ids: Object.fromEntries(
        Object.entries(world.foreign.ids).map(([k, v]) => [k, missingLike(v)]),
      ) as typeof world.foreign.ids,
    };
    for (const op of swept) {
      const key = world.own.keys.admin;
      await expectInvisible(
        op,
        [op, key, world.own, world.foreign],
        [op, key, world.own, absentTenant],
      );
    }
  });
});
