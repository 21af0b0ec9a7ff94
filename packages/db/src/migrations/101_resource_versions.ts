import type { Knex } from 'knex';

/** The tables whose rows clients edit under If-Match (docs/API.md, Conditional edits). */
const TABLES = ['webhook_subscriptions', 'receptionists', 'leads', 'campaigns'] as const;

/**
 * A version per row, counted up by every change a client makes to it (a PATCH, a lead
 * import's change, a campaign's cancel): its ETag is `W/"<version>"`, and an edit with
 * If-Match applies only while the row still has a version it names (checked in the edit's
 * own statement, packages/db/src/versions.ts). A constant default: no table is rewritten.
 */
export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 1`,
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(`ALTER TABLE ${table} DROP COLUMN IF EXISTS version`);
  }
}
