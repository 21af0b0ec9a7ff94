import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { insertEvents, newTimeOrderedId, type Knex } from '@switchboard/db';
import { currentTraceparent, inSpan } from '@switchboard/telemetry';
import type { FromSchema } from 'json-schema-to-ts';
import {
  ACCOUNT_LEVEL_EVENTS,
  EVENT_DATA_SCHEMAS,
  isEventType,
  RECEPTIONIST_OPTIONAL_EVENTS,
  type EventType,
} from './catalog';

type Schemas = typeof EVENT_DATA_SCHEMAS;
/** The typed `data` of each event, derived once from its schema. */
export interface EventDataMap {
  'call.started': FromSchema<Schemas['call.started']>;
  'call.completed': FromSchema<Schemas['call.completed']>;
  'call.missed': FromSchema<Schemas['call.missed']>;
  'sms.received': FromSchema<Schemas['sms.received']>;
  'sms.sent': FromSchema<Schemas['sms.sent']>;
  'sms.delivered': FromSchema<Schemas['sms.delivered']>;
  'sms.failed': FromSchema<Schemas['sms.failed']>;
  'receptionist.ready': FromSchema<Schemas['receptionist.ready']>;
  'receptionist.error': FromSchema<Schemas['receptionist.error']>;
  'lead.created': FromSchema<Schemas['lead.created']>;
  'lead.updated': FromSchema<Schemas['lead.updated']>;
  'campaign.completed': FromSchema<Schemas['campaign.completed']>;
  'usage.threshold': FromSchema<Schemas['usage.threshold']>;
  'webhook.test': FromSchema<Schemas['webhook.test']>;
  'webhook.failing': FromSchema<Schemas['webhook.failing']>;
  'webhook.disabled': FromSchema<Schemas['webhook.disabled']>;
  'webhook.recovered': FromSchema<Schemas['webhook.recovered']>;
  'test_data.deleted': FromSchema<Schemas['test_data.deleted']>;
}
export type EventData<T extends EventType> = EventDataMap[T];

/**
 * Postgres channel notified on commit of an outbox insert with an event to relay (the
 * insert's own statement notifies: `insertEvents` in packages/db); the relay LISTENs on it.
 */
export const OUTBOX_CHANNEL = 'switchboard_outbox';

/** Emitting data that does not match the catalog is a programming error, never a client's. */
export class EventSchemaError extends Error {
  constructor(type: string, detail: string) {
    super(`event ${type} does not match its schema: ${detail}`);
    this.name = 'EventSchemaError';
  }
}

const ajv = new Ajv({ allErrors: false, strict: false });
addFormats(ajv);
/** Each event type's data validator, compiled at its first emit. */
const validators = new Map<string, ValidateFunction>();
function validatorOf(type: EventType): ValidateFunction {
  let validate = validators.get(type);
  if (!validate) {
    validate = ajv.compile(EVENT_DATA_SCHEMAS[type]);
    validators.set(type, validate);
  }
  return validate;
}

export interface EmitInput<T extends EventType> {
  tenantId: string;
  receptionistId?: string | null;
  type: T;
  data: EventData<T>;
  /** false: a test-mode event (docs/API.md, Test mode); absent: live. */
  livemode?: boolean;
}

/** Checks one event against the catalog; returns the receptionist id its row carries. */
function checked<T extends EventType>(input: EmitInput<T>): string | null {
  if (!isEventType(input.type)) throw new EventSchemaError(input.type, 'unknown event type');
  const validate = validatorOf(input.type);
  if (!validate(input.data)) {
    const e = validate.errors?.[0];
    throw new EventSchemaError(input.type, `${e?.instancePath || '/'} ${e?.message ?? ''}`.trim());
  }
  if (ACCOUNT_LEVEL_EVENTS.has(input.type)) return null;
  if (!input.receptionistId && !RECEPTIONIST_OPTIONAL_EVENTS.has(input.type)) {
    throw new EventSchemaError(input.type, 'receptionist_id is required for this event');
  }
  return input.receptionistId ?? null;
}

/**
 * Writes an event into the outbox inside the caller's transaction, so the event exists if and
 * only if the state change it reports commits. Returns the new event id. With tracing on,
 * the write is a span (`outbox.write`) whose trace context is stored with the event: the
 * worker's relay, fan-out and delivery attempts continue that trace.
 */
// The envelope timestamp is the commit-side emission time; `data` carries when things happened.
export async function emit<T extends EventType>(trx: Knex, input: EmitInput<T>): Promise<string> {
  const receptionistId = checked(input);
  // The id carries its row's created_at, so lookups by id find its partition.
  const createdAt = new Date();
  const id = newTimeOrderedId('evt', createdAt);
  const attributes = { 'switchboard.event_id': id, 'switchboard.event_type': input.type };
  await inSpan('outbox.write', { attributes }, async () => {
    await insertEvents(trx, [
      {
        id,
        tenantId: input.tenantId,
        receptionistId,
        type: input.type,
        data: input.data as Record<string, unknown>,
        createdAt,
        traceparent: currentTraceparent(),
        livemode: input.livemode ?? true,
      },
    ]);
  });
  return id;
}

/**
 * `emit` for many events in one statement (a batch of an import): same checks, same
 * transaction rule, one outbox insert (which notifies the relay), one `outbox.write` span
 * whose trace context every event of the batch stores. Returns the ids in order.
 */
export async function emitMany<T extends EventType>(
  trx: Knex,
  inputs: ReadonlyArray<EmitInput<T>>,
): Promise<string[]> {
  if (inputs.length === 0) return [];
  const createdAt = new Date();
  const rows = inputs.map((input) => ({
    traceparent: null as string | null,
    id: newTimeOrderedId('evt', createdAt),
    tenantId: input.tenantId,
    receptionistId: checked(input),
    type: input.type,
    data: input.data as Record<string, unknown>,
    createdAt,
    livemode: input.livemode ?? true,
  }));
  const attributes = {
    'switchboard.event_type': [...new Set(inputs.map((i) => i.type))].join(','),
    'switchboard.event_count': rows.length,
  };
  await inSpan('outbox.write', { attributes }, async () => {
    const traceparent = currentTraceparent();
    if (traceparent) for (const row of rows) row.traceparent = traceparent;
    await insertEvents(trx, rows);
  });
  return rows.map((r) => r.id);
}

/** Validates data against the catalog without writing (for tests and tools). */
export function validateEventData(type: string, data: unknown): string | null {
  if (!isEventType(type)) return 'unknown event type';
  const validate = validatorOf(type);
  return validate(data) ? null : (validate.errors?.[0]?.message ?? 'invalid');
}
