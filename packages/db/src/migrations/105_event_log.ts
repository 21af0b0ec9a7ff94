import type { Knex } from 'knex';
import { createIndexOnline } from './frozen/105_event_log/online-index';

/**
 * The tenant's event log (docs/API.md, Events): `GET /events` pages a tenant's events newest
 * first, and event streams read them oldest first after a position. Both are one range of
 * `events_tenant_created_idx` (tenant_id, created_at, id), from the retention cutoff or a
 * cursor on, in the days the bounds name only. Built online (createIndexOnline).
 */
export const config = { transaction: false };

const INDEX = {
  name: 'events_tenant_created_idx',
  suffix: 'tenant_created_idx',
  columns: '(tenant_id, created_at, id)',
};

export async function up(knex: Knex): Promise<void> {
  await createIndexOnline(knex, 'events', INDEX);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS ${INDEX.name}`);
}
