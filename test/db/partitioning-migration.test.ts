import { createKnex, migrateLatest, type Knex } from '@switchboard/db';
import { databaseUrl } from '../support/env';
import { createPrePartitionDatabase } from '../support/pre-partition-db';
import { digestTables, seedHistory } from '../support/seed-history';

// Migration 020 on a populated database from before partitioning (migrated up to 012): every
// row is kept, byte for byte, including rows written and updated while it runs.
let db: Awaited<ReturnType<typeof createPrePartitionDatabase>>;
let knex: Knex;
let writer: Knex;

beforeAll(async () => {
  db = await createPrePartitionDatabase();
  knex = db.knex;
  writer = createKnex(databaseUrl(db.name), { poolMax: 1 });
});
afterAll(async () => {
  await writer?.destroy();
  await db?.close();
});

/** Writes through the tables until `done()`: returns the calls inserted and deliveries moved. */
async function writeWhile(done: () => boolean) {
  const inserted: string[] = [];
  const updated: string[] = [];
  for (let i = 0; !done() && i < 100_000; i++) {
    const id = `call_w${i}`;
    await writer.raw(
      `INSERT INTO calls (id, tenant_id, receptionist_id, direction, status, from_number,
                          to_number, started_at)
       VALUES (?, 'ten_h', 'rcp_h', 'inbound', 'completed', '+14155550101', '+14155550100', now())`,
      [id],
    );
    inserted.push(id);
    const dlv = `dlv_h${(i % 300) * 10 + 10}`; // a pending one
    await writer.raw(`UPDATE webhook_deliveries SET status = 'failed', attempts = ? WHERE id = ?`, [
      1000 + i,
      dlv,
    ]);
    updated.push(dlv);
  }
  return { inserted, updated };
}

// The migration copies six tables while the writer runs: on a busy machine that takes well
// over jest's default 30 s, and nothing here is about how fast it is.
it('moves every row of a populated installation, while it is written to', async () => {
  await seedHistory(knex, 3000, 26);
  const before = await digestTables(knex);
  expect(before.calls?.rows).toBe(3000);

  let finished = false;
  const writes = writeWhile(() => finished);
  const applied = await migrateLatest(knex).finally(() => {
    finished = true;
  });
  const { inserted, updated } = await writes;
  expect(applied).toContain('020_partitioning');
  expect(inserted.length).toBeGreaterThan(0);

  const kinds = (await knex.raw(
    `SELECT relname, relkind FROM pg_class WHERE relname = ANY (?) ORDER BY relname`,
    [Object.keys(before)],
  )) as { rows: { relname: string; relkind: string }[] };
  expect(kinds.rows.map((r) => r.relkind)).toEqual(['p', 'p', 'p', 'p', 'p', 'p']);

  // Every row written during the migration is there, with its last update.
  const calls = await knex('calls').whereIn('id', inserted).count({ n: '*' });
  expect(Number(calls[0]?.n)).toBe(inserted.length);
  const last = new Map<string, number>();
  updated.forEach((id, i) => last.set(id, 1000 + i));
  const moved = (await knex('webhook_deliveries')
    .whereIn('id', [...last.keys()])
    .select('id', 'attempts')) as { id: string; attempts: number }[];
  expect(moved.map((r) => [r.id, r.attempts]).sort()).toEqual([...last.entries()].sort());

  // And every other row is unchanged, byte for byte.
  await knex('calls').whereIn('id', inserted).delete();
  await knex('webhook_deliveries')
    .whereIn('id', [...last.keys()])
    .update({ status: 'pending', attempts: 2 });
  expect(await digestTables(knex, before)).toEqual(before);
}, 180_000);

it('keeps old rows where the list finds them and stores a row of any date', async () => {
  const page = await knex('calls')
    .where({ tenant_id: 'ten_h' })
    .orderBy([
      { column: 'started_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(3)
    .select('id');
  expect(page.map((r: { id: string }) => r.id)).toEqual(['call_h1', 'call_h2', 'call_h3']);
  for (const startedAt of ['1999-01-01T00:00:00Z', '2093-05-05T00:00:00Z']) {
    await knex('calls').insert({
      id: `call_${startedAt.slice(0, 4)}`,
      tenant_id: 'ten_h',
      receptionist_id: 'rcp_h',
      direction: 'inbound',
      status: 'completed',
      from_number: '+14155550101',
      to_number: '+14155550100',
      started_at: startedAt,
    });
  }
  const stored = (await knex.raw(
    `SELECT tableoid::regclass::text AS part FROM calls WHERE id IN ('call_1999', 'call_2093')
      ORDER BY id`,
  )) as { rows: { part: string }[] };
  expect(stored.rows.map((r) => r.part)).toEqual(['calls_archive', 'calls_default']);
});

it('keeps a provider call id unique across partitions', async () => {
  // call_h1 (now) holds pc_h1; a row for it dated two years back lands in another partition.
  const result = (await knex.raw(
    `INSERT INTO calls (id, tenant_id, receptionist_id, provider_call_id, direction, status,
                        from_number, to_number, started_at)
     VALUES ('call_dup', 'ten_h', 'rcp_h', 'pc_h1', 'inbound', 'ringing', '+1', '+2',
             now() - interval '2 years')
     ON CONFLICT DO NOTHING RETURNING id`,
  )) as { rows: unknown[] };
  expect(result.rows).toEqual([]);
  await expect(
    knex('calls').where({ id: 'call_h2' }).update({ provider_call_id: 'pc_h3000' }),
  ).rejects.toMatchObject({ code: '23505' });
});
