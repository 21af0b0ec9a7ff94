import type { Knex } from 'knex';
import { FUNCTION_BODIES } from './097_uniqueness_bounded_above';

/**
 * The uniqueness trigger of `webhook_deliveries` (migrations 020, 095, 097) no longer looks
 * for a holder of the rows the relay inserts
 * (docs/decisions/0137-relay-rows-skip-the-uniqueness-lookup.md). Those are the only rows
 * inserted already claimed (`status = 'delivering'`), and each is unique by construction:
 * the relay inserts an event's deliveries in the statement that deletes its outbox row
 * (packages/db/src/stores/publish-next-sql.ts), and an event gets one outbox row (its key),
 * once: when it is written, or when it is adopted from a version before 098, only if no
 * such version fanned it out. A second relay of the event waits for that delete, then finds
 * no row and makes nothing. Every other insert (a recovery's) is looked up as before.
 *
 * Only the function is replaced (CREATE OR REPLACE takes no lock on the table, so writers
 * go on during the upgrade; remaking the trigger would lock every partition against them),
 * and only where the partitioning (020) installed it. Its body is 097's, after a first
 * test.
 */

/** 097's body: the lookup of a holder (yesterday's and today's partitions). */
function lookup(): string {
  const body = FUNCTION_BODIES.webhook_deliveries;
  if (!body) throw new Error('migration 097 has no body for webhook_deliveries');
  return body;
}

async function replace(knex: Knex, body: string): Promise<void> {
  const { rows } = (await knex.raw(
    `SELECT 1 FROM pg_proc WHERE proname = 'webhook_deliveries_unique_keys'`,
  )) as { rows: unknown[] };
  if (rows.length === 0) return;
  await knex.raw(
    `CREATE OR REPLACE FUNCTION webhook_deliveries_unique_keys() RETURNS trigger
       LANGUAGE plpgsql AS $$
     BEGIN ${body}
       RETURN NEW;
     END $$`,
  );
}

export async function up(knex: Knex): Promise<void> {
  await replace(knex, `IF NEW.status = 'delivering' THEN RETURN NEW; END IF;${lookup()}`);
}

export async function down(knex: Knex): Promise<void> {
  await replace(knex, lookup());
}
