import {
  ACCOUNT_LEVEL_EVENTS,
  EVENT_DATA_EXAMPLES,
  EVENT_DATA_SCHEMAS,
  EVENT_DESCRIPTIONS,
  EVENT_TYPES,
  RECEPTIONIST_OPTIONAL_EVENTS,
  type EventType,
} from '@switchboard/events';
import {
  SERVICE_EVENT_ID_HEADER,
  SERVICE_SIGNATURE_HEADER,
  SERVICE_TIMESTAMP_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
} from '@switchboard/webhooks';
import type { SchemaComponents } from './components';

export const WEBHOOK_EVENTS_TAG = 'Webhook events';

/** `call.completed` → `CallCompleted`. */
const pascal = (name: string): string =>
  name
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

/** `call.completed` → `callCompletedEvent`: the operationId of the event in `webhooks`. */
const operationIdOf = (event: string): string => {
  const p = pascal(event);
  return `${p.charAt(0).toLowerCase()}${p.slice(1)}Event`;
};

const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
});

/** The headers of every delivery: both signature schemes and the deduplication id. */
const DELIVERY_HEADERS = [
  header(SERVICE_TIMESTAMP_HEADER, 'Unix seconds of the signing moment', '1795256100'),
  header(
    SERVICE_SIGNATURE_HEADER,
    'Lowercase hex HMAC-SHA256, keyed with the whole `whsec_…` secret (UTF-8), over ' +
      '`timestamp + "." + raw body`',
    '5d41402abc4b2a76b9719d911017c592ae2b8e1c6b0d3f2a4c5e6f7081920a3b',
  ),
  header(
    SERVICE_EVENT_ID_HEADER,
    'The event id: the same on every retry, for deduplication',
    'evt_9Xa2bC4dE6fG8hJ0',
  ),
  header(STANDARD_ID_HEADER, 'Standard Webhooks id (the event id)', 'evt_9Xa2bC4dE6fG8hJ0'),
  header(STANDARD_TIMESTAMP_HEADER, 'Standard Webhooks timestamp (same value)', '1795256100'),
  header(
    STANDARD_SIGNATURE_HEADER,
    '`v1,` + base64 HMAC-SHA256 keyed with the base64-decoded part of the secret after ' +
      '`whsec_`, over `id + "." + timestamp + "." + raw body` (Standard Webhooks / Svix)',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ),
];

const DELIVERY_NOTES =
  'Delivered as `POST` with `Content-Type: application/json` and ' +
  '`User-Agent: Switchboard-Webhooks/1`. Verify either signature on the raw body before ' +
  'parsing it. At least once: deduplicate on the event id. Order is not guaranteed.';

/** The envelope of one event (`id, event, receptionist_id?, data, timestamp, livemode`). */
function envelopeSchema(event: EventType): object {
  const accountLevel = ACCOUNT_LEVEL_EVENTS.has(event);
  // The test event also names itself in `type` (buildTestEnvelope).
  const isTest = event === 'webhook.test';
  return {
    title: `${pascal(event)}Event`,
    type: 'object',
    required: [
      'id',
      ...(isTest ? ['type'] : []),
      'event',
      ...(accountLevel || RECEPTIONIST_OPTIONAL_EVENTS.has(event) ? [] : ['receptionist_id']),
      'data',
      'timestamp',
      'livemode',
    ],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: '^evt_', description: 'Event id; deduplicate on it' },
      ...(isTest ? { type: { const: event } } : {}),
      event: { const: event },
      ...(accountLevel
        ? {}
        : { receptionist_id: { type: 'string', pattern: '^rcp_', description: 'Whose event' } }),
      data: EVENT_DATA_SCHEMAS[event],
      timestamp: { type: 'string', format: 'date-time', description: 'When it happened' },
      livemode: {
        type: 'boolean',
        description: 'false: a test-mode event (made with an sk_test_ key; docs: Test mode)',
      },
    },
  };
}

/**
 * Any stored event's envelope (GET /events, event streams): one of the catalog's envelopes,
 * told apart by `event`. `webhook.test` is never stored, so it is not one of them.
 */
export function eventEnvelopeSchema(): object {
  return {
    title: 'Event',
    description:
      'An event exactly as a webhook delivers it (the envelope); `event` names its type and ' +
      'the shape of its `data`',
    oneOf: EVENT_TYPES.filter((t) => t !== 'webhook.test').map(envelopeSchema),
  };
}

function envelopeExample(event: EventType): object | undefined {
  const data = EVENT_DATA_EXAMPLES[event];
  if (!data) return undefined;
  return {
    id: 'evt_9Xa2bC4dE6fG8hJ0',
    ...(event === 'webhook.test' ? { type: event } : {}),
    event,
    ...(ACCOUNT_LEVEL_EVENTS.has(event) ? {} : { receptionist_id: 'rcp_7Hq2Lm9Xc4Tz' }),
    data,
    timestamp: '2026-11-21T10:16:35.000Z',
    livemode: true,
  };
}

/** One event of the catalog, as GET /event-types lists it. */
export interface EventTypeEntry {
  name: EventType;
  description: string;
  /** JSON Schema of the envelope's `data`. */
  schema: object;
  /** One whole envelope. */
  example: object;
}

/**
 * Every event the service emits, with its description, the schema of its `data` and an
 * example envelope: the one source of both the OpenAPI `webhooks` section and
 * GET /event-types (a test proves they agree).
 */
export function eventCatalog(): EventTypeEntry[] {
  return EVENT_TYPES.map((name) => ({
    name,
    description: EVENT_DESCRIPTIONS[name] ?? `The \`${name}\` event.`,
    schema: EVENT_DATA_SCHEMAS[name],
    example: envelopeExample(name) ?? {},
  }));
}

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type of the catalog
 * (`packages/events/src/catalog.ts`), so a new event type is documented the moment it exists.
 */
export function buildWebhooks(components: SchemaComponents): Record<string, object> {
  const out: Record<string, object> = {};
  for (const { name: event, description, example } of eventCatalog()) {
    out[event] = {
      post: {
        operationId: operationIdOf(event),
        summary: event,
        description: `${description}\n\n${DELIVERY_NOTES}`,
        tags: [WEBHOOK_EVENTS_TAG],
        security: [],
        parameters: DELIVERY_HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: components.ref(`${pascal(event)}Event`, envelopeSchema(event)),
              ...(Object.keys(example).length ? { example } : {}),
            },
          },
        },
        responses: {
          '200': {
            description:
              'Any 2xx within 10 s acknowledges the delivery; the body is read up to 64 KiB ' +
              'and ignored',
          },
          '4XX': {
            description:
              'Any other status (also 3xx: redirects are not followed), or no answer within ' +
              '10 s, fails the attempt; it is retried (3 attempts by default)',
          },
        },
      },
    };
  }
  return out;
}
