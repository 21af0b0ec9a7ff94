import type { Knex } from 'knex';

/**
 * Open event streams (docs/API.md, Events; docs/decisions/0101-event-streams.md): one row per
 * `GET /events/stream` connection of any API process, held by a lease its process renews
 * while the stream is open and deleted when it ends; a crashed process's rows lapse with
 * their lease. The rows are the per-key limit on open streams (counted across every API
 * process), and a tenant with a live row is one whose new events notify the streams'
 * channel (EVENT_STREAM_CHANNEL): events of tenants nobody streams notify nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('event_streams', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('key_id').notNullable().references('api_keys.id').onDelete('CASCADE');
    t.specificType('opened_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('expires_at', 'timestamptz(3)').notNullable();
  });
  await knex.raw(`CREATE INDEX event_streams_tenant_idx ON event_streams (tenant_id, expires_at)`);
  await knex.raw(`CREATE INDEX event_streams_key_idx ON event_streams (key_id, expires_at)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('event_streams');
}
