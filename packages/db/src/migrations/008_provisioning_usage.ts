import type { Knex } from 'knex';

/**
 * Receptionist provisioning (an asynchronous workflow driven by the worker) and usage
 * metering (counters per tenant and calendar month, kept in the transaction that completes a
 * call, so that GET /usage is one indexed read and never a scan of `calls`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('receptionists', (t) => {
    // What was asked for: a 3-digit US area code, or null for any.
    t.text('area_code');
    // The Postgres backstop of POST /receptionists' Idempotency-Key (see calls).
    t.text('idempotency_key');
    t.text('idempotency_fingerprint');
    // Why provisioning failed (status `error`); cleared when it starts again.
    t.text('error_code');
    t.text('error_message');
    t.specificType('failed_at', 'timestamptz(3)');
    // A round is one run of up to 3 attempts; POST /receptionists/{id}/provision starts the
    // next round. `provisioning_attempts` counts the attempts claimed in the current round.
    t.integer('provisioning_round').notNullable().defaultTo(1);
    t.integer('provisioning_attempts').notNullable().defaultTo(0);
    // While an attempt runs, its claim holds until this time (a crashed worker's lapses).
    t.specificType('provisioning_locked_until', 'timestamptz(3)');
    // When the reconciler should look at the row again if nothing else happened by then.
    t.specificType('provisioning_next_at', 'timestamptz(3)');
    // The number bought for this receptionist, recorded the moment the provider returned it
    // and before anything else happens, so no later attempt ever buys another one. It becomes
    // `phone_number` when the receptionist is ready.
    t.text('purchased_number');
  });
  await knex.raw(
    'CREATE UNIQUE INDEX receptionists_idempotency_idx ON receptionists (tenant_id, idempotency_key) ' +
      'WHERE idempotency_key IS NOT NULL',
  );
  await knex.raw(
    'CREATE INDEX receptionists_provisioning_idx ON receptionists (provisioning_next_at) ' +
      "WHERE status = 'provisioning'",
  );

  // The per-call "counted" marker: the minutes this call added to usage, set once, by the
  // transaction that counted it. NULL = not counted (not completed, or not yet).
  await knex.schema.alterTable('calls', (t) => {
    t.integer('counted_minutes');
  });

  // Totals per tenant and month. This row is also the serialisation point of a tenant's
  // completions: its update holds the row lock until the completing transaction commits.
  await knex.schema.createTable('usage_periods', (t) => {
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.date('period_start').notNullable();
    t.integer('minutes_used').notNullable().defaultTo(0);
    t.integer('calls_completed').notNullable().defaultTo(0);
    t.integer('sms_sent').notNullable().defaultTo(0);
    t.integer('sms_received').notNullable().defaultTo(0);
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'period_start']);
  });
  // The same counters per receptionist (the by_receptionist breakdown).
  await knex.schema.createTable('usage_receptionist_periods', (t) => {
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.date('period_start').notNullable();
    t.text('receptionist_id').notNullable().references('receptionists.id').onDelete('CASCADE');
    t.integer('minutes_used').notNullable().defaultTo(0);
    t.integer('calls_completed').notNullable().defaultTo(0);
    t.integer('sms_sent').notNullable().defaultTo(0);
    t.integer('sms_received').notNullable().defaultTo(0);
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'period_start', 'receptionist_id']);
  });
  // One row per threshold reached: usage.threshold is emitted only by the transaction whose
  // insert created the row, so it fires exactly once per tenant, period and threshold.
  await knex.schema.createTable('usage_thresholds', (t) => {
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.date('period_start').notNullable();
    t.smallint('threshold').notNullable();
    t.integer('minutes_used').notNullable();
    t.integer('minutes_included').notNullable();
    t.specificType('reached_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'period_start', 'threshold']);
  });

  await backfillUsage(knex);
}

/**
 * Calls completed before metering existed are counted once here, marked counted, and the
 * thresholds they already reached are recorded without an event: nobody is alerted late
 * about the past, and a later message about one of those calls never counts it again.
 */
async function backfillUsage(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE calls SET counted_minutes = ceil(coalesce(duration_seconds, 0) / 60.0)::int
     WHERE status = 'completed' AND ended_at IS NOT NULL`);
  await aggregateCountedCalls(knex);
}

/**
 * Builds the usage counters (and the thresholds already reached) from the calls marked
 * counted, into empty usage tables. Also used by the usage benchmark to seed its counters
 * the way an upgraded deployment gets them.
 */
export async function aggregateCountedCalls(knex: Knex): Promise<void> {
  const period = "date_trunc('month', ended_at AT TIME ZONE 'UTC')::date";
  await knex.raw(`
    INSERT INTO usage_receptionist_periods
           (tenant_id, period_start, receptionist_id, minutes_used, calls_completed)
    SELECT tenant_id, ${period}, receptionist_id, sum(counted_minutes), count(*)
      FROM calls WHERE counted_minutes IS NOT NULL
     GROUP BY 1, 2, 3`);
  await knex.raw(`
    INSERT INTO usage_periods (tenant_id, period_start, minutes_used, calls_completed)
    SELECT tenant_id, period_start, sum(minutes_used), sum(calls_completed)
      FROM usage_receptionist_periods GROUP BY 1, 2`);
  await knex.raw(`
    INSERT INTO usage_thresholds (tenant_id, period_start, threshold, minutes_used, minutes_included)
    SELECT u.tenant_id, u.period_start, th.threshold, u.minutes_used, t.plan_minutes
      FROM usage_periods u
      JOIN tenants t ON t.id = u.tenant_id
     CROSS JOIN (VALUES (80), (100)) AS th(threshold)
     WHERE t.plan_minutes > 0 AND u.minutes_used::bigint * 100 >= th.threshold::bigint * t.plan_minutes`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('usage_thresholds');
  await knex.schema.dropTable('usage_receptionist_periods');
  await knex.schema.dropTable('usage_periods');
  await knex.schema.alterTable('calls', (t) => t.dropColumn('counted_minutes'));
  await knex.raw('DROP INDEX IF EXISTS receptionists_provisioning_idx');
  await knex.raw('DROP INDEX IF EXISTS receptionists_idempotency_idx');
  await knex.schema.alterTable('receptionists', (t) => {
    for (const c of [
      'area_code',
      'idempotency_key',
      'idempotency_fingerprint',
      'error_code',
      'error_message',
      'failed_at',
      'provisioning_round',
      'provisioning_attempts',
      'provisioning_locked_until',
      'provisioning_next_at',
      'purchased_number',
    ]) {
      t.dropColumn(c);
    }
  });
}
