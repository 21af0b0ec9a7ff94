import { SCOPES } from '@switchboard/db';
import { hasScope } from '../../apps/api/src/http/auth';
import { createTestContext, type TestContext } from '../support/context';
import { label, servedOperations, type Operation } from './operations';
import { exampleRequest, loopbackLookup, send, snapshot } from './requests';
import { buildWorld, type World } from './world';

// Scopes, swept over every operation of the served OpenAPI document (docs/API.md, Authentication and scopes):
// a key whose scope is below the operation's `x-required-scope` gets 403 insufficient_scope
// and changes nothing; a key with exactly that scope is not refused for its scope.
let ctx: TestContext;
let world: World;
let operations: Operation[];

beforeAll(async () => {
  ctx = await createTestContext({}, { webhookLookup: loopbackLookup });
  world = await buildWorld(ctx);
  ({ operations } = await servedOperations(ctx.app));
  operations.sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
}, 60_000);
afterAll(() => ctx?.close());

it('every operation of the document names the scope it requires', () => {
  // The one operation without a key: the portal page trades its link's code.
  expect(operations.filter((op) => !op.scope).map(label)).toEqual([
    label(operations.find((op) => op.operationId === 'exchangePortalCode')!),
  ]);
});

// Portal tokens (docs/API.md, Tenant portal): an operation that names no
// `x-portal-capability` refuses every portal token with 403; one that names a capability
// refuses a token without it, and serves (is not refused for its scope) a token with it.
it('a portal token is held to the capabilities the document names, on every operation', async () => {
  let refused = 0;
  let served = 0;
  for (const op of operations) {
    if (!op.scope) continue;
    const tokens: Array<[string, string, boolean]> = [
      ['full', world.own.portal.full, op.portal !== null],
      ['view', world.own.portal.view, op.portal === 'view'],
    ];
    for (const [name, token, allowed] of tokens) {
      const before = await snapshot(ctx.deps.knex, world.own.tenantId);
      const res = await send(ctx.app, exampleRequest(op, token, world.own));
      const code = res.status === 403 ? res.body.error?.code : 'served';
      expect([label(op), name, code]).toEqual([
        label(op),
        name,
        allowed ? 'served' : 'insufficient_scope',
      ]);
      if (!allowed) {
        expect(await snapshot(ctx.deps.knex, world.own.tenantId)).toEqual(before);
        refused++;
      } else served++;
    }
  }
  expect(refused).toBeGreaterThanOrEqual(30);
  expect(served).toBeGreaterThanOrEqual(8);
}, 120_000);

it('a key below the required scope gets 403 and changes nothing, on every operation', async () => {
  let refused = 0;
  for (const op of operations) {
    const required = op.scope;
    if (!required) continue;
    for (const scope of SCOPES.filter((s) => !hasScope([s], required))) {
      const before = await snapshot(ctx.deps.knex, world.own.tenantId);
      const res = await send(ctx.app, exampleRequest(op, world.own.keys[scope], world.own));
      expect([label(op), scope, res.status, res.body.error?.code]).toEqual([
        label(op),
        scope,
        403,
        'insufficient_scope',
      ]);
      expect(res.body.error.message).toContain(required);
      expect(await snapshot(ctx.deps.knex, world.own.tenantId)).toEqual(before);
      refused++;
    }
    // With exactly the required scope the same request is not refused for its scope.
    const res = await send(ctx.app, exampleRequest(op, world.own.keys[required], world.own));
    expect([label(op), required, res.status === 403 ? res.body.error?.code : 'served']).toEqual([
      label(op),
      required,
      'served',
    ]);
  }
  // write operations refuse read keys; admin operations refuse read and write keys.
  expect(refused).toBeGreaterThanOrEqual(10);
});
