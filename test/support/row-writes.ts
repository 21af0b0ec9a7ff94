import type { Knex } from '@switchboard/db';

/**
 * Lists every write of every delivery row from now on (a trigger into a `row_writes` table
 * of the test's database): what a test of row work per delivery counts. Call it before any
 * event is emitted.
 */
export async function listDeliveryWrites(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE row_writes (id text, op text, status text, claims int,
                                           n serial)`);
  await knex.raw(`
    CREATE FUNCTION list_row_writes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO row_writes (id, op, status, claims) VALUES (NEW.id, TG_OP, NEW.status, NEW.claims);
      RETURN NEW;
    END $$`);
  await knex.raw(
    'CREATE TRIGGER list_row_writes AFTER INSERT OR UPDATE ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION list_row_writes()',
  );
}

/** The writes of a delivery row, in order: [operation, status, claims]. */
export async function writesOf(knex: Knex, id: string): Promise<Array<[string, string, number]>> {
  const rows = (await knex('row_writes')
    .where({ id })
    .orderBy('n')
    .select('op', 'status', 'claims')) as Array<{ op: string; status: string; claims: number }>;
  return rows.map((r) => [r.op, r.status, r.claims]);
}
