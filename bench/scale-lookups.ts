/**
 * Lookups by id on the seeded history database, without and with the id's time bounds:
 * Postgres' buffer counts (deterministic, unlike rates on a shared machine). Run after
 * `npm run bench:scale -- --keep`, which leaves `switchboard_bench_scale` with time-ordered
 * ids from its worker run:
 *
 *   npx tsx bench/scale-lookups.ts [database]
 */
import { Client } from 'pg';
import { idTimeBoundsSql } from '../packages/db/src/ids';

async function main(): Promise<void> {
  const db = process.argv[2] ?? 'switchboard_bench_scale';
  const c = new Client({ connectionString: `postgres://postgres@127.0.0.1:5432/${db}` });
  await c.connect();
  const { rows } = await c.query(
    `SELECT id FROM webhook_deliveries WHERE id ~ '^dlv_[0-9a-f]{12}7' LIMIT 1`,
  );
  const { rows: ev } = await c.query(
    `SELECT id FROM events WHERE id ~ '^evt_[0-9a-f]{12}7' LIMIT 20`,
  );
  const id = (rows[0] as { id: string } | undefined)?.id;
  if (!id) throw new Error(`${db} has no time-ordered delivery id: run bench:scale --keep first`);
  const show = async (label: string, sql: string, params: unknown[] = []) => {
    const r = await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
    const lines = r.rows.map((x) => (x as Record<string, string>)['QUERY PLAN']!);
    const top = lines.find((l) => /Buffers/.test(l));
    process.stdout.write(
      `${label} | ${top?.trim()} | ${lines.find((l) => /Execution/.test(l))?.trim()}\n`,
    );
  };
  await show('get by id, old', `SELECT * FROM webhook_deliveries WHERE id = $1`, [id]);
  await show(
    'get by id, new',
    `SELECT * FROM webhook_deliveries t WHERE id = $1 AND ${idTimeBoundsSql('$1::text', 't.created_at')}`,
    [id],
  );
  await c.query('BEGIN');
  const arr = ev.map((e) => (e as { id: string }).id);
  await show(
    'event update (20), old',
    `WITH q AS (SELECT DISTINCT unnest($1::text[]) AS id) UPDATE events e SET fanned_out_at = now() FROM q WHERE e.id = q.id AND e.fanned_out_at IS NOT NULL`,
    [arr],
  );
  await show(
    'event update (20), new',
    `WITH q AS (SELECT DISTINCT unnest($1::text[]) AS id) UPDATE events e SET fanned_out_at = now() FROM q WHERE e.id = q.id AND ${idTimeBoundsSql('q.id', 'e.created_at')} AND e.fanned_out_at IS NOT NULL`,
    [arr],
  );
  await c.query('ROLLBACK');
  await c.end();
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/scale-lookups failed: ${String(err)}\n`);
  process.exit(1);
});
