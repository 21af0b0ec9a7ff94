import type { Knex } from 'knex';

/**
 * Leads (docs/API.md, Leads), CSV imports and the chunks of their uploaded files.
 *
 * Search is served by indexes only: the (tenant_id, created_at DESC, id DESC) btree walks a
 * tenant newest first (keyset pages, and searches whose matches are common), and trigram GIN
 * indexes on name, email and phone find rare fragments without reading every row. The
 * planner picks between the two per query; docs/LEADS.md shows the plans at a million leads.
 */
export async function up(knex: Knex): Promise<void> {
  // Trusted extension (Postgres 13+): the database owner may create it.
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await knex.schema.createTable('leads', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('name');
    // E.164, normalised before it is stored.
    t.text('phone');
    t.text('email');
    t.text('source').notNullable();
    t.text('status').notNullable().defaultTo('new');
    t.text('notes');
    t.specificType('tags', 'text[]').notNullable().defaultTo('{}');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.text('receptionist_id').references('receptionists.id').onDelete('SET NULL');
    // The import that last wrote the lead: a later row of the same file with the same key is
    // then a duplicate (counted once), also across batches and after a resumed crash.
    t.text('last_import_id');
    t.text('idempotency_key');
    t.text('idempotency_fingerprint');
    // Invariant: created_at never changes (keyset order depends on it).
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    'CREATE INDEX leads_tenant_recent_idx ON leads (tenant_id, created_at DESC, id DESC)',
  );
  await knex.raw(
    'CREATE INDEX leads_tenant_status_recent_idx ON leads (tenant_id, status, created_at DESC, id DESC)',
  );
  // One lead per phone per tenant; and one phone-less lead per email (imports upsert by it).
  await knex.raw(
    'CREATE UNIQUE INDEX leads_tenant_phone_key ON leads (tenant_id, phone) WHERE phone IS NOT NULL',
  );
  await knex.raw(
    'CREATE UNIQUE INDEX leads_tenant_email_phoneless_key ON leads (tenant_id, lower(email)) WHERE phone IS NULL AND email IS NOT NULL',
  );
  await knex.raw('CREATE INDEX leads_tenant_email_idx ON leads (tenant_id, lower(email))');
  await knex.raw(
    'CREATE UNIQUE INDEX leads_idempotency_idx ON leads (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL',
  );
  await knex.raw('CREATE INDEX leads_name_trgm_idx ON leads USING gin (name gin_trgm_ops)');
  await knex.raw('CREATE INDEX leads_email_trgm_idx ON leads USING gin (email gin_trgm_ops)');
  await knex.raw('CREATE INDEX leads_phone_trgm_idx ON leads USING gin (phone gin_trgm_ops)');
  await knex.raw('CREATE INDEX leads_tags_idx ON leads USING gin (tags)');
  // Finer statistics for LIKE estimates: the planner's choice between walking the recency
  // index and a trigram bitmap scan depends on how common a fragment is.
  await knex.raw('ALTER TABLE leads ALTER COLUMN name SET STATISTICS 1000');

  await knex.schema.createTable('lead_imports', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    // uploading (internal, never shown) → processing → completed | failed
    t.text('status').notNullable();
    t.integer('total_rows').notNullable().defaultTo(0);
    // The resume cursor: data rows whose outcome is committed. Advances with each batch.
    t.integer('processed_rows').notNullable().defaultTo(0);
    t.integer('created').notNullable().defaultTo(0);
    t.integer('updated').notNullable().defaultTo(0);
    t.integer('skipped').notNullable().defaultTo(0);
    t.integer('duplicates').notNullable().defaultTo(0);
    // The first 100 row errors: [{row, field, message}].
    t.jsonb('errors').notNullable().defaultTo('[]');
    t.bigInteger('bytes').notNullable().defaultTo(0);
    t.text('sha256');
    // Runs started since the last committed batch: a file that keeps failing is given up.
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('failure_reason');
    t.text('source').notNullable().defaultTo('api');
    t.text('idempotency_key');
    t.text('idempotency_fingerprint');
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('completed_at', 'timestamptz(3)');
  });
  await knex.raw(
    "CREATE INDEX lead_imports_open_idx ON lead_imports (updated_at) WHERE status IN ('uploading', 'processing')",
  );
  await knex.raw(
    'CREATE UNIQUE INDEX lead_imports_idempotency_idx ON lead_imports (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL',
  );
  // The uploaded file, in order, in chunks of at most 1 MiB: any worker can read it, and
  // neither the API nor the worker ever holds the whole file in memory.
  await knex.schema.createTable('lead_import_chunks', (t) => {
    t.text('import_id').notNullable().references('lead_imports.id').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.binary('data').notNullable();
    t.primary(['import_id', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('lead_import_chunks');
  await knex.schema.dropTable('lead_imports');
  await knex.schema.dropTable('leads');
}
