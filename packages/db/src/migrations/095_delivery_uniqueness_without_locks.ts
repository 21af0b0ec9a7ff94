import type { Knex } from 'knex';

/**
 * The uniqueness trigger of `webhook_deliveries` without its advisory lock per row: a fan-out
 * held one per delivery to its commit, enough at a few thousand to fill the server's shared
 * lock table (test/db/fan-out-locks.test.ts). Only the function is replaced (the trigger
 * calls it by name), and only where the partitioning (020) installed it. Its SQL is written
 * out here, as it was then: migration 097 has replaced it since.
 *
 * Why no lock is needed: a fan-out inserts one delivery per (event, target), hundreds of
 * thousands in one transaction at the limits. Every writer of a (target, event) pair is
 * already serialized on a row: a fan-out on the event's (its update of `fanned_out_at` in the
 * same statement; a second fan-out waits, then finds it set), a recovery on the
 * subscription's (FOR NO KEY UPDATE), and a recovery only takes events whose fan-out
 * committed, with its deliveries. The lookup stays, for a statement run again after its
 * commit.
 */
const FUNCTION_BODY = `
    IF EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_id = NEW.event_id
                  AND created_at >= now() - interval '1 day'
                  AND (subscription_id = NEW.subscription_id
                       OR (NEW.subscription_id IS NULL AND subscription_id IS NULL
                           AND receptionist_id = NEW.receptionist_id))) THEN
      RETURN NULL;
    END IF;`;

export async function up(knex: Knex): Promise<void> {
  const { rows } = (await knex.raw(
    `SELECT 1 FROM pg_proc WHERE proname = 'webhook_deliveries_unique_keys'`,
  )) as { rows: unknown[] };
  if (rows.length === 0) return;
  await knex.raw(
    `CREATE OR REPLACE FUNCTION webhook_deliveries_unique_keys() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN ${FUNCTION_BODY}
       RETURN NEW;
     END $$`,
  );
}

/** Nothing to undo: the trigger without the lock keeps every guarantee of earlier versions. */
export async function down(): Promise<void> {}
