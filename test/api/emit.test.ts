import request from 'supertest';
import { emit, emitMany, EventSchemaError } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';

let ctx: TestContext;
let tenantId: string;
let unsubscribed: string;
beforeAll(async () => {
  ctx = await createTestContext();
  let auth: string;
  ({ tenantId, auth } = await ctx.tenant());
  const sub = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({ url: 'https://127.0.0.1:9/hook', events: ['call.started'] });
  expect(sub.status).toBe(201);
  ({ tenantId: unsubscribed } = await ctx.tenant());
});
afterAll(() => ctx.close());

const data = {
  call_id: 'call_abc',
  direction: 'inbound' as const,
  from: '+15551230001',
  to: '+15551230002',
  started_at: '2026-11-21T10:15:00.000Z',
};

describe('emit()', () => {
  it('writes the event inside the caller transaction', async () => {
    const id = await ctx.deps.knex.transaction((trx) =>
      emit(trx, { tenantId, receptionistId: 'rcp_1', type: 'call.started', data }),
    );
    const stored = await ctx.deps.stores.events.get(id);
    expect(stored).toMatchObject({ type: 'call.started', tenantId, receptionistId: 'rcp_1', data });
    // In the outbox, for the relay.
    expect(await ctx.deps.stores.events.pending([id])).toEqual(new Set([id]));
  });

  // Fair fan-out (docs/webhooks.md, "Inside", step 1): an event nobody subscribed to never enters
  // the outbox, so a flood of them waits behind no one and makes no one wait.
  it('an event with no target is stored fanned out: never in the outbox', async () => {
    const many = Array.from({ length: 50 }, () => ({
      tenantId: unsubscribed,
      receptionistId: 'rcp_1',
      type: 'call.started' as const,
      data,
    }));
    const ids = await ctx.deps.knex.transaction((trx) => emitMany(trx, many));
    // A type the subscription does not take is not a target either.
    const other = await ctx.deps.knex.transaction((trx) =>
      emit(trx, {
        tenantId,
        receptionistId: 'rcp_1',
        type: 'call.missed',
        data: {
          call_id: 'call_m',
          from: '+15551230001',
          to: '+15551230002',
          missed_at: data.started_at,
          recovery_scheduled: false,
        },
      }),
    );
    for (const id of [...ids, other]) expect(await ctx.deps.stores.events.get(id)).toBeDefined();
    expect(await ctx.deps.stores.events.pending([...ids, other])).toEqual(new Set());
  });

  it('persists nothing when the transaction rolls back', async () => {
    let id = '';
    await expect(
      ctx.deps.knex.transaction(async (trx) => {
        id = await emit(trx, { tenantId, receptionistId: 'rcp_1', type: 'call.started', data });
        throw new Error('business failure after emit');
      }),
    ).rejects.toThrow('business failure after emit');
    expect(id).toMatch(/^evt_/);
    expect(await ctx.deps.stores.events.get(id)).toBeUndefined();
  });

  it('throws on data that does not match the schema, and writes nothing', async () => {
    const before = (await ctx.deps.stores.events.listForTenant(tenantId)).length;
    await expect(
      ctx.deps.knex.transaction((trx) =>
        emit(trx, {
          tenantId,
          receptionistId: 'rcp_1',
          type: 'call.started',
          data: { ...data, from: 'not a phone' },
        }),
      ),
    ).rejects.toBeInstanceOf(EventSchemaError);
    await expect(
      ctx.deps.knex.transaction((trx) =>
        // @ts-expect-error an unknown event type is refused at compile time too
        emit(trx, { tenantId, receptionistId: 'rcp_1', type: 'call.teleported', data }),
      ),
    ).rejects.toBeInstanceOf(EventSchemaError);
    expect(await ctx.deps.stores.events.listForTenant(tenantId)).toHaveLength(before);
  });

  it('requires a receptionist for receptionist-scoped events', async () => {
    await expect(
      ctx.deps.knex.transaction((trx) => emit(trx, { tenantId, type: 'call.started', data })),
    ).rejects.toBeInstanceOf(EventSchemaError);
  });
});
