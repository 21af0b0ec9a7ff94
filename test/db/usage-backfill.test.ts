import { createKnex, migrateLatest, type Knex } from '@switchboard/db';
import { migrationSource } from '../../packages/db/src/migrations';
import { createTestDatabase } from '../support/database';
import { insertCalls } from '../support/fixtures';

// Migration 008 on a database that already has calls: completed calls are counted once, in
// the month they ended, thresholds already reached are recorded without events, and a later
// report of one of those calls does not count it again.
let db: { name: string; url: string };
let knex: Knex;

beforeAll(async () => {
  db = await createTestDatabase();
  knex = createKnex(db.url, { poolMax: 2 });
  await knex.migrate.down({ migrationSource, name: '008_provisioning_usage' });
});
afterAll(() => knex?.destroy());

it('counts the calls completed before metering existed', async () => {
  await knex('tenants').insert({ id: 'ten_a', name: 'A', plan_minutes: 10 });
  await knex('receptionists').insert({
    id: 'rcp_a',
    tenant_id: 'ten_a',
    name: 'Desk',
    status: 'ready',
  });
  const at = (iso: string) => ({ startedAt: new Date(iso), endedAt: new Date(iso) });
  await insertCalls(knex, 'ten_a', 'rcp_a', 3, () => ({
    ...at('2026-01-20T10:00:00.000Z'),
    durationSeconds: 200, // 4 minutes each: 12 of 10 in January
  }));
  await insertCalls(knex, 'ten_a', 'rcp_a', 1, () => ({
    ...at('2026-02-01T00:00:10.000Z'),
    durationSeconds: 59,
  }));
  await insertCalls(knex, 'ten_a', 'rcp_a', 2, () => ({
    ...at('2026-02-02T00:00:00.000Z'),
    status: 'busy',
    durationSeconds: 0,
  }));

  expect(await migrateLatest(knex)).toEqual(['008_provisioning_usage']);

  const periods = await knex('usage_periods')
    .select(
      knex.raw("to_char(period_start, 'YYYY-MM') AS period"),
      'minutes_used',
      'calls_completed',
    )
    .orderBy('period_start');
  expect(periods).toEqual([
    { period: '2026-01', minutes_used: 12, calls_completed: 3 },
    { period: '2026-02', minutes_used: 1, calls_completed: 1 },
  ]);
  const perReceptionist = await knex('usage_receptionist_periods').sum({ m: 'minutes_used' });
  expect(Number(perReceptionist[0]?.m)).toBe(13);
  const reached = await knex('usage_thresholds')
    .select(knex.raw("to_char(period_start, 'YYYY-MM') AS period"), 'threshold')
    .orderBy('threshold');
  expect(reached).toEqual([
    { period: '2026-01', threshold: 80 },
    { period: '2026-01', threshold: 100 },
  ]);
  expect(await knex('events').where({ type: 'usage.threshold' })).toEqual([]);
  const marked = await knex('calls').whereNotNull('counted_minutes').count({ n: '*' });
  expect(Number(marked[0]?.n)).toBe(4);
});
