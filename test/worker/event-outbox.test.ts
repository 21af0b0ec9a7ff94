import type { IncomingMessage, ServerResponse } from 'node:http';
import { newTimeOrderedId, type Knex } from '@switchboard/db';
import { NEW_EVENT_ID_SQL } from '../../packages/db/src/stores/operational-events-sql';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { callStartedData, emitCallStarted, subscriber, waitFor } from '../support/worker';

// The outbox is a table of its own (packages/db/src/stores/event-outbox-sql.ts): an event row
// is written once, with an outbox row its fan-out deletes. Rows a version before it left
// pending (both outbox marks NULL) are moved into it by the reconciler, without racing a
// process of that version that is fanning one of them out.
let world: WebhookWorld;
let knex: Knex;
const received: string[] = [];

beforeAll(async () => {
  world = await startWebhookWorld({
    '/hook': (req: IncomingMessage, res: ServerResponse) => {
      received.push(String(req.headers['x-service-event-id']));
      res.writeHead(204).end();
    },
  });
  knex = world.ctx.deps.knex;
  await knex.raw(`CREATE TABLE event_writes (id text, op text, n serial)`);
  await knex.raw(`
    CREATE FUNCTION list_event_writes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO event_writes (id, op) VALUES (NEW.id, TG_OP);
      RETURN NEW;
    END $$`);
  await knex.raw(
    'CREATE TRIGGER list_event_writes AFTER INSERT OR UPDATE ON events FOR EACH ROW EXECUTE FUNCTION list_event_writes()',
  );
}, 60_000);
afterAll(async () => {
  await world?.close();
});

const writesOf = async (id: string): Promise<string[]> =>
  (await knex('event_writes').where({ id }).orderBy('n').pluck('op')) as string[];

/**
 * An event row as a version before the outbox table wrote it: in the outbox by its marks.
 * `sqlTime`: dated by Postgres' now() to the microsecond, as that version's operational
 * events were, with an id made from it.
 */
async function legacyEvent(
  tenantId: string,
  receptionistId: string,
  published: boolean,
  sqlTime = false,
) {
  if (sqlTime) {
    const { rows } = (await knex.raw(
      `INSERT INTO events (id, tenant_id, receptionist_id, type, data, created_at,
                           published_at, fanned_out_at)
       VALUES (${NEW_EVENT_ID_SQL}, ?, ?, 'call.started', ?::jsonb, now(),
               CASE WHEN ? THEN now() END, NULL)
       RETURNING id`,
      [tenantId, receptionistId, JSON.stringify(callStartedData()), published],
    )) as { rows: Array<{ id: string }> };
    return rows[0]!.id;
  }
  const createdAt = new Date();
  const id = newTimeOrderedId('evt', createdAt);
  await knex('events').insert({
    id,
    tenant_id: tenantId,
    receptionist_id: receptionistId,
    type: 'call.started',
    data: callStartedData(),
    created_at: createdAt,
    published_at: published ? createdAt : null,
    fanned_out_at: null,
  });
  return id;
}

it('writes an event once; its fan-out deletes its outbox row', async () => {
  const { tenant, receptionistId } = await subscriber(world.ctx, `${world.base}/hook`);
  const eventId = await emitCallStarted(world.ctx, tenant.tenantId, receptionistId);
  await waitFor('the delivery to succeed', async () => {
    const d = await knex('webhook_deliveries').where({ event_id: eventId }).first();
    return d?.status === 'succeeded' || undefined;
  });
  expect(received).toContain(eventId);
  expect(await world.ctx.deps.stores.events.pending([eventId])).toEqual(new Set());
  expect(await writesOf(eventId)).toEqual(['INSERT']);
});

it('delivers the events a version before the outbox table left pending', async () => {
  const { tenant, receptionistId } = await subscriber(world.ctx, `${world.base}/hook`);
  const unpublished = await legacyEvent(tenant.tenantId, receptionistId, false);
  const notFannedOut = await legacyEvent(tenant.tenantId, receptionistId, true, true);
  // The reconciler (grace 1.5 s in tests) moves them into the outbox; the relay fans out.
  await waitFor('both to be delivered', () =>
    [unpublished, notFannedOut].every((id) => received.includes(id)),
  );
  for (const id of [unpublished, notFannedOut]) {
    expect(await knex('webhook_deliveries').where({ event_id: id })).toHaveLength(1);
    const e = await knex('events').where({ id }).first();
    expect(e.published_at).not.toBeNull();
    expect(e.fanned_out_at).not.toBeNull();
  }
});

it('leaves alone a pending event that a process of a version before it is fanning out', async () => {
  const { tenant, receptionistId } = await subscriber(world.ctx, `${world.base}/hook`);
  const eventId = await legacyEvent(tenant.tenantId, receptionistId, false);
  // That process's relay: the row claimed, then its one update (both marks), not committed.
  const trx = await knex.transaction();
  let adopted: Promise<number> | undefined;
  try {
    await trx.raw('SELECT 1 FROM events WHERE id = ? FOR UPDATE', [eventId]);
    await trx('events')
      .where({ id: eventId })
      .update({ published_at: trx.fn.now(), fanned_out_at: trx.fn.now() });
    adopted = world.ctx.deps.stores.events.adoptLegacy(0, 10);
    await waitFor('the move to wait for the row', async () => {
      const { rows } = (await knex.raw(
        `SELECT 1 FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE events e SET published_at%'`,
      )) as { rows: unknown[] };
      return rows.length > 0 || undefined;
    });
    await trx.commit();
  } catch (err) {
    await trx.rollback();
    throw err;
  }
  // It found the row fanned out once the lock was released: nothing moved, no outbox row.
  expect(await adopted).toBe(0);
  expect(await world.ctx.deps.stores.events.pending([eventId])).toEqual(new Set());
});
