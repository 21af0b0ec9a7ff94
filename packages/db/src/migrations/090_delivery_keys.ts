import type { Knex } from 'knex';

/**
 * No foreign keys on `webhook_deliveries` (docs/decisions/0076-no-foreign-keys-on-deliveries.md):
 * every delivery the fan-out inserts paid a check of its tenant and of its subscription (or
 * receptionist), each a `FOR KEY SHARE` lock on the referenced row, for guarantees the application
 * already gives:
 * - tenant: copied from the delivery's event in the same statement (events keep their key
 *   to tenants), and the application never deletes a tenant;
 * - subscription: taken from a join on the tenant's live subscriptions in the same
 *   statement; deleting a subscription deletes its deliveries in the same transaction
 *   (`WebhookSubscriptionsStore.delete`, what the key's ON DELETE CASCADE did), and a
 *   delivery whose subscription is gone is canceled at its claim, never sent;
 * - receptionist (legacy webhook_url): from a join on receptionists in the same statement,
 *   and the application never deletes a receptionist.
 * The keys of the event (to `events`) and of an attempt (to its delivery) were dropped when
 * the tables were partitioned (020). Dropping a key on a partitioned table drops it on every
 * partition; a table not attached (an archive) is done on its own.
 */
const KEYS = [
  'webhook_deliveries_tenant_id_foreign',
  'webhook_deliveries_subscription_id_foreign',
  'webhook_deliveries_receptionist_id_foreign',
] as const;

/** Tables that hold a key of that name with no parent constraint (the top of a tree). */
async function holders(knex: Knex, name: string): Promise<string[]> {
  const { rows } = (await knex.raw(
    `SELECT c.conrelid::regclass::text AS tbl FROM pg_constraint c
      WHERE c.conname = ? AND c.contype = 'f' AND c.conparentid = 0`,
    [name],
  )) as { rows: Array<{ tbl: string }> };
  return rows.map((r) => r.tbl);
}

/**
 * One key at a time, each in its own transaction. Dropping a key locks its referenced table
 * (ACCESS EXCLUSIVE) besides the deliveries; in one transaction the three drops held
 * `tenants` while waiting for `receptionists`, and a concurrent insert whose key checks
 * locked them in the other order (a call: receptionist, then tenant) deadlocked with it. A
 * drop is idempotent (IF EXISTS), so a run interrupted between two drops is completed by the
 * next.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  for (const name of KEYS) {
    for (const table of await holders(knex, name)) {
      await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ??`, [name]);
    }
  }
}

/** Puts the keys back (validating every row: fails if a delivery's target is gone). */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_tenant_id_foreign
      FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE,
    ADD CONSTRAINT webhook_deliveries_subscription_id_foreign
      FOREIGN KEY (subscription_id) REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
    ADD CONSTRAINT webhook_deliveries_receptionist_id_foreign
      FOREIGN KEY (receptionist_id) REFERENCES receptionists(id) ON DELETE CASCADE`);
}
