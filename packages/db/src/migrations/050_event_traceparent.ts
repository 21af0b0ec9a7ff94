import type { Knex } from 'knex';

/**
 * The W3C trace context of the span that wrote an event to the outbox (a `traceparent`),
 * so the relay, the fan-out and every delivery attempt join the trace of the request that
 * caused the event, in another process and at any later time. NULL when tracing was off.
 * Nullable without a default: adding it rewrites nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.text('traceparent');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropColumn('traceparent');
  });
}
