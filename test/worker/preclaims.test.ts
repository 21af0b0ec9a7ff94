import { DeliveryLifecycle } from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// Pre-claims (docs/DECISIONS.md, Row work per delivery), statement by statement (no worker
// running: called directly). A fan-out with a pre-claim makes each delivery `delivering`
// with no claim counted; only its holder claims it before the lock lapses: as it is (a read:
// the row is not written) while enough of it is left, renewed otherwise; a delivery job it
// was handed on to renews it, once; a pre-claim nobody takes lapses like a claim.
let ctx: TestContext;
const lifecycle = new DeliveryLifecycle();
const LOCK_MS = 10_000;
/** The pre-claim a holder needs left to take it as it is. */
const LEFT_MS = 8_000;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

/** One event of a fresh subscriber, fanned out with a pre-claim of `preclaimMs`. */
async function preclaimed(preclaimMs = LOCK_MS) {
  const s = await subscriber(ctx, 'https://127.0.0.1:9/hook');
  const eventId = await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
  const [d] = await lifecycle.fanOut(ctx.deps.knex, [eventId], preclaimMs);
  if (!d) throw new Error('no delivery made');
  return { eventId, d, request: { deliveryId: d.id, round: 1, attempt: 1 } };
}

/** The row's state and its version (xmin changes with every write of the row). */
async function row(id: string) {
  const { rows } = (await ctx.deps.knex.raw(
    `SELECT status, claims, locked_until, xmin::text AS version
       FROM webhook_deliveries WHERE id = ?`,
    [id],
  )) as {
    rows: Array<{ status: string; claims: number; locked_until: Date | null; version: string }>;
  };
  return rows[0];
}

it('makes deliveries pre-claimed, and a re-run returns them as pre-claimed, not made', async () => {
  const { eventId, d } = await preclaimed();
  expect(d).toMatchObject({ preclaimed: true, made: true, round: 1, attempts: 0, claims: 0 });
  expect(await row(d.id)).toMatchObject({ status: 'delivering', claims: 0 });
  const again = await lifecycle.fanOut(ctx.deps.knex, [eventId], LOCK_MS);
  expect(again).toEqual([{ ...d, made: false }]);
  // Without a pre-claim a fan-out makes pending deliveries, as before.
  const s = await subscriber(ctx, 'https://127.0.0.1:9/hook');
  const other = await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
  const [plain] = await lifecycle.fanOut(ctx.deps.knex, [other]);
  expect(plain).toMatchObject({ preclaimed: false, made: true });
  expect(await row(plain!.id)).toMatchObject({ status: 'pending', claims: 0, locked_until: null });
});

it('the holder takes its pre-claim without writing the row; nobody else claims it', async () => {
  const { d, request } = await preclaimed();
  const before = await row(d.id);
  expect(await lifecycle.claim(ctx.deps.knex, [request], LOCK_MS, LEFT_MS)).toEqual([undefined]);
  const [taken] = await lifecycle.claim(
    ctx.deps.knex,
    [{ ...request, preclaim: 'take' }],
    LOCK_MS,
    LEFT_MS,
  );
  expect(taken?.delivery).toMatchObject({ id: d.id, status: 'delivering', claims: 0 });
  expect(taken?.event.type).toBe('call.started');
  expect(taken?.subscription?.isActive).toBe(true);
  expect(await row(d.id)).toEqual(before);
});

it('renews a pre-claim with too little left, once: a claim counted, the row written', async () => {
  const { d, request } = await preclaimed();
  const before = await row(d.id);
  // More left is needed than the whole pre-claim: it is renewed as a claim.
  const holder = { ...request, preclaim: 'take' as const };
  const [renewed] = await lifecycle.claim(ctx.deps.knex, [holder], LOCK_MS, LOCK_MS * 2);
  expect(renewed?.delivery).toMatchObject({ id: d.id, status: 'delivering', claims: 1 });
  const after = await row(d.id);
  expect(after?.version).not.toBe(before?.version);
  expect(after?.locked_until?.getTime()).toBeGreaterThanOrEqual(
    before?.locked_until?.getTime() ?? Infinity,
  );
  // The pre-claim is spent: a second request holding it gets nothing.
  expect(await lifecycle.claim(ctx.deps.knex, [holder], LOCK_MS, LEFT_MS)).toEqual([undefined]);
});

it('a delivery job the pre-claim was handed on to renews it, once, and never takes it as it is', async () => {
  const { d, request } = await preclaimed();
  const before = await row(d.id);
  const job = { ...request, preclaim: 'renew' as const };
  // Plenty of the pre-claim left, but a job run twice must not send twice: it renews.
  const [renewed] = await lifecycle.claim(ctx.deps.knex, [job], LOCK_MS, LEFT_MS);
  expect(renewed?.delivery).toMatchObject({ id: d.id, status: 'delivering', claims: 1 });
  expect((await row(d.id))?.version).not.toBe(before?.version);
  // The same job run again (stalled), or the pre-claim's holder: nothing.
  expect(await lifecycle.claim(ctx.deps.knex, [job], LOCK_MS, LEFT_MS)).toEqual([undefined]);
  expect(
    await lifecycle.claim(ctx.deps.knex, [{ ...request, preclaim: 'take' }], LOCK_MS, LEFT_MS),
  ).toEqual([undefined]);
});

it('a pre-claim nobody takes lapses like a claim: listed as lapsed, then claimed by anyone', async () => {
  const { d, request } = await preclaimed(200);
  await waitFor('the pre-claim to lapse', async () =>
    (await lifecycle.lapsed(ctx.deps.knex, 1000)).some((l) => l.id === d.id),
  );
  // Lapsed, it is no longer taken as it is, even by its holder: a claim is counted.
  const [claimed] = await lifecycle.claim(
    ctx.deps.knex,
    [{ ...request, preclaim: 'take' }],
    LOCK_MS,
    LEFT_MS,
  );
  expect(claimed?.delivery).toMatchObject({ id: d.id, claims: 1 });
});

it('a pre-claim lapsed long ago is left to the overdue scan, a claim lapsed long ago is not', async () => {
  const { d } = await preclaimed();
  const { d: claimed, request } = await preclaimed();
  await lifecycle.claim(ctx.deps.knex, [{ ...request, preclaim: 'renew' }], LOCK_MS, LEFT_MS);
  // Both lapsed a minute ago, and due since then (a job waiting in a long queue, say).
  await ctx.deps
    .knex('webhook_deliveries')
    .whereIn('id', [d.id, claimed.id])
    .update({
      locked_until: ctx.deps.knex.raw("now() - interval '1 minute'"),
      next_attempt_at: ctx.deps.knex.raw("now() - interval '1 minute'"),
    });
  const lapsed = (await lifecycle.lapsed(ctx.deps.knex, 1000)).map((l) => l.id);
  expect(lapsed).toContain(claimed.id);
  expect(lapsed).not.toContain(d.id);
  const overdue = (await lifecycle.overdue(ctx.deps.knex, 1_000, 1000)).map((o) => o.id);
  expect(overdue).toEqual(expect.arrayContaining([d.id, claimed.id]));
});
