import {
  createStores,
  migrateLatest,
  newTimeOrderedId,
  sweepPendingFloor,
  type Knex,
} from '@switchboard/db';
import { createDatabaseMigratedTo, type ScratchDatabase } from '../support/pre-partition-db';

// Upgrading to migration 098 (the outbox table) with events pending
// (docs/decisions/0092-migration-098-moves-no-event.md): the migration leaves them as the version
// before it keeps them, for that version's processes still running; the reconciler's adoption moves
// them.
let db: ScratchDatabase;
let knex: Knex;

beforeAll(async () => {
  db = await createDatabaseMigratedTo('097_uniqueness_bounded_above');
  knex = db.knex;
}, 60_000);
afterAll(async () => {
  await db?.close();
});

it('moves no pending event; the reconciler adopts those still pending', async () => {
  await knex('tenants').insert({ id: 'ten_upgrade', name: 'Upgrade' });
  const createdAt = new Date(Date.now() - 60_000);
  const ids = [newTimeOrderedId('evt', createdAt), newTimeOrderedId('evt', createdAt)];
  // One unpublished (the relay's), one published but not fanned out (the reconciler's).
  await knex('events').insert(
    ids.map((id, i) => ({
      id,
      tenant_id: 'ten_upgrade',
      type: 'call.started',
      data: {},
      created_at: createdAt,
      published_at: i === 0 ? null : createdAt,
      fanned_out_at: null,
    })),
  );

  // 098 and every migration after it (none of those touches events).
  expect((await migrateLatest(knex))[0]).toBe('098_event_outbox');
  expect(await knex('event_outbox').pluck('event_id')).toEqual([]);
  expect(await knex('events').whereIn('id', ids).whereNull('fanned_out_at').pluck('id')).toEqual(
    expect.arrayContaining(ids),
  );

  // The worker sweeps the pending floor every minute; its reconciler then finds both.
  await sweepPendingFloor(knex, 'events');
  const stores = createStores(knex);
  expect(await stores.events.adoptLegacy(15_000, 500)).toBe(2);
  expect(await stores.events.pending(ids)).toEqual(new Set(ids));
  expect(await knex('events').whereIn('id', ids).whereNull('fanned_out_at').pluck('id')).toEqual(
    [],
  );
});
