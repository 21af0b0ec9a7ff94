import type { Knex } from 'knex';

/**
 * The uniqueness triggers of `webhook_deliveries` and `webhook_delivery_attempts` look for a
 * holder up to an hour past `now()` (the transaction's start) as well as from a day before
 * it: their rows are dated by `now()` of the transaction that wrote them, so a holder is
 * never later than that unless a writer ran for an hour. Each row inserted no longer looks
 * into the seven days made ahead of the clock and the default partition, only yesterday's
 * and today's (test/db/uniqueness-bounds.test.ts). Only the functions are replaced (the
 * triggers call them by name), and only where the partitioning (020) installed them. Their
 * SQL is written out here; the rest of each trigger's rules are migration 020's
 * (./frozen/020_partitioning/uniqueness.ts) and, for deliveries, 095's.
 */
export const FUNCTION_BODIES: Record<string, string> = {
  webhook_deliveries: `
    IF EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_id = NEW.event_id
                  AND created_at >= now() - interval '1 day'
                  AND created_at < now() + interval '1 hour'
                  AND (subscription_id = NEW.subscription_id
                       OR (NEW.subscription_id IS NULL AND subscription_id IS NULL
                           AND receptionist_id = NEW.receptionist_id))) THEN
      RETURN NULL;
    END IF;`,
  webhook_delivery_attempts: `
    PERFORM pg_advisory_xact_lock(hashtextextended('attempt:' || NEW.delivery_id || ':' || NEW.round || ':' || NEW.attempt, 28));
    IF EXISTS (SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = NEW.delivery_id
                  AND round = NEW.round AND attempt = NEW.attempt
                  AND attempted_at >= now() - interval '1 day'
                  AND attempted_at < now() + interval '1 hour') THEN
      RAISE EXCEPTION 'duplicate key value violates unique constraint "%"',
        'webhook_delivery_attempts_delivery_id_round_attempt_unique'
        USING ERRCODE = 'unique_violation',
              CONSTRAINT = 'webhook_delivery_attempts_delivery_id_round_attempt_unique';
    END IF;`,
};

export async function up(knex: Knex): Promise<void> {
  for (const [table, body] of Object.entries(FUNCTION_BODIES)) {
    const { rows } = (await knex.raw(`SELECT 1 FROM pg_proc WHERE proname = ?`, [
      `${table}_unique_keys`,
    ])) as { rows: unknown[] };
    if (rows.length === 0) continue;
    await knex.raw(
      `CREATE OR REPLACE FUNCTION ${table}_unique_keys() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN ${body}
       RETURN NEW;
     END $$`,
    );
  }
}

/** Nothing to undo: the bounded lookups keep every guarantee of the earlier versions. */
export async function down(): Promise<void> {}
