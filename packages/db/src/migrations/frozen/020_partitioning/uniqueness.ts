// Frozen with migration 020 (./index.ts), as it was written: migrations 095 and 097 have
// replaced the functions of deliveries and attempts since.

/**
 * Uniqueness across partitions. Postgres enforces a unique index only within a partition, and
 * these keys do not contain the partition key, so a BEFORE trigger enforces each of them on
 * the whole table: it takes a transaction-scoped advisory lock on the key (two writers of one
 * key run one after the other, the second after the first committed) and then looks for
 * another row holding it, with a fresh snapshot (READ COMMITTED, which every writer of these
 * tables uses). An INSERT meeting a holder is skipped, as `ON CONFLICT DO NOTHING` would:
 * the callers' inserts say `ON CONFLICT DO NOTHING` and read the holder afterwards, exactly
 * as with the unique indexes these replace. An UPDATE, or an attempt logged twice, raises
 * unique_violation like the index did. Keys that only matter for a bounded time are looked
 * up in that window (partition pruning keeps it to the newest partitions):
 * - Idempotency-Keys of calls and SMS: 24 hours, the contract's retention of a key;
 * - an attempt's (delivery, round, attempt), a (target, event) delivery: 1 day; the racing
 *   writers they guard against run at the same moment (a re-claimed attempt, a fan-out run
 *   twice), and an event's fan-out is also guarded by its `fanned_out_at`.
 */

/** The unique indexes of the unpartitioned tables that the triggers below replace. */
export const TRIGGER_ENFORCED: readonly string[] = [
  'calls_provider_idx',
  'calls_idempotency_idx',
  'sms_idempotency_idx',
  'sms_inbound_provider_idx',
  'webhook_deliveries_subscription_event_idx',
  'webhook_deliveries_receptionist_event_idx',
  'webhook_delivery_attempts_delivery_id_round_attempt_unique',
  'telephony_messages_pkey',
];

const lock = (parts: string) => `PERFORM pg_advisory_xact_lock(hashtextextended(${parts}, 28));`;

/** Skip an insert, refuse an update (as a unique index would). */
const conflict = (constraint: string) => `
      IF TG_OP = 'INSERT' THEN RETURN NULL; END IF;
      RAISE EXCEPTION 'duplicate key value violates unique constraint "${constraint}"'
        USING ERRCODE = 'unique_violation', CONSTRAINT = '${constraint}';`;

const changed = (cols: string[]) =>
  `(TG_OP = 'INSERT' OR ${cols.map((c) => `NEW.${c} IS DISTINCT FROM OLD.${c}`).join(' OR ')})`;

const FUNCTIONS: Record<string, { fn: string; events: string }> = {
  calls: {
    events: 'INSERT OR UPDATE OF receptionist_id, provider_call_id, tenant_id, idempotency_key',
    fn: `
    IF NEW.provider_call_id IS NOT NULL AND ${changed(['receptionist_id', 'provider_call_id'])} THEN
      ${lock(`'calls.provider:' || NEW.receptionist_id || ':' || NEW.provider_call_id`)}
      IF EXISTS (SELECT 1 FROM calls WHERE receptionist_id = NEW.receptionist_id
                    AND provider_call_id = NEW.provider_call_id AND id <> NEW.id) THEN
        ${conflict('calls_provider_idx')}
      END IF;
    END IF;
    IF NEW.idempotency_key IS NOT NULL AND ${changed(['tenant_id', 'idempotency_key'])} THEN
      ${lock(`'calls.idempotency:' || NEW.tenant_id || ':' || NEW.idempotency_key`)}
      IF EXISTS (SELECT 1 FROM calls WHERE tenant_id = NEW.tenant_id
                    AND idempotency_key = NEW.idempotency_key AND id <> NEW.id
                    AND started_at > now() - interval '24 hours') THEN
        ${conflict('calls_idempotency_idx')}
      END IF;
    END IF;`,
  },
  sms_messages: {
    events:
      'INSERT OR UPDATE OF receptionist_id, provider_message_id, direction, tenant_id, idempotency_key',
    fn: `
    IF NEW.direction = 'inbound' AND NEW.provider_message_id IS NOT NULL
       AND ${changed(['receptionist_id', 'provider_message_id', 'direction'])} THEN
      ${lock(`'sms.inbound:' || NEW.receptionist_id || ':' || NEW.provider_message_id`)}
      IF EXISTS (SELECT 1 FROM sms_messages WHERE receptionist_id = NEW.receptionist_id
                    AND provider_message_id = NEW.provider_message_id
                    AND direction = 'inbound' AND id <> NEW.id) THEN
        ${conflict('sms_inbound_provider_idx')}
      END IF;
    END IF;
    IF NEW.idempotency_key IS NOT NULL AND ${changed(['tenant_id', 'idempotency_key'])} THEN
      ${lock(`'sms.idempotency:' || NEW.tenant_id || ':' || NEW.idempotency_key`)}
      IF EXISTS (SELECT 1 FROM sms_messages WHERE tenant_id = NEW.tenant_id
                    AND idempotency_key = NEW.idempotency_key AND id <> NEW.id
                    AND created_at > now() - interval '24 hours') THEN
        ${conflict('sms_idempotency_idx')}
      END IF;
    END IF;`,
  },
  telephony_messages: {
    events: 'INSERT',
    fn: `
    ${lock(`'telephony:' || NEW.id`)}
    IF EXISTS (SELECT 1 FROM telephony_messages WHERE id = NEW.id) THEN
      RETURN NULL;
    END IF;`,
  },
  webhook_deliveries: {
    events: 'INSERT',
    fn: `
    ${lock(`'delivery:' || coalesce(NEW.subscription_id::text, NEW.receptionist_id) || ':' || NEW.event_id`)}
    IF EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_id = NEW.event_id
                  AND created_at >= now() - interval '1 day'
                  AND (subscription_id = NEW.subscription_id
                       OR (NEW.subscription_id IS NULL AND subscription_id IS NULL
                           AND receptionist_id = NEW.receptionist_id))) THEN
      RETURN NULL;
    END IF;`,
  },
  webhook_delivery_attempts: {
    events: 'INSERT',
    fn: `
    ${lock(`'attempt:' || NEW.delivery_id || ':' || NEW.round || ':' || NEW.attempt`)}
    IF EXISTS (SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = NEW.delivery_id
                  AND round = NEW.round AND attempt = NEW.attempt
                  AND attempted_at >= now() - interval '1 day') THEN
      RAISE EXCEPTION 'duplicate key value violates unique constraint "%"',
        'webhook_delivery_attempts_delivery_id_round_attempt_unique'
        USING ERRCODE = 'unique_violation',
              CONSTRAINT = 'webhook_delivery_attempts_delivery_id_round_attempt_unique';
    END IF;`,
  },
};

/** The statements that install `table`'s uniqueness trigger (none for `events`). */
export function uniquenessSql(table: string): string[] {
  const f = FUNCTIONS[table];
  if (!f) return [];
  return [
    `CREATE OR REPLACE FUNCTION ${table}_unique_keys() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN ${f.fn}
       RETURN NEW;
     END $$`,
    `DROP TRIGGER IF EXISTS ${table}_unique_keys ON ${table}`,
    `CREATE TRIGGER ${table}_unique_keys BEFORE ${f.events} ON ${table}
       FOR EACH ROW EXECUTE FUNCTION ${table}_unique_keys()`,
  ];
}
