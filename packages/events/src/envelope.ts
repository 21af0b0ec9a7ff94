import type { EventType } from './catalog';

/** The JSON body POSTed to subscribers (docs/API.md, Deliveries). */
export interface EventEnvelope {
  id: string;
  event: string;
  receptionist_id?: string;
  data: Record<string, unknown>;
  /** ISO 8601 UTC with milliseconds: when the event happened. */
  timestamp: string;
  /** false: a test-mode event (docs/API.md, Test mode). */
  livemode: boolean;
}

/** The webhook.test payload adds `type` (docs/API.md, Deliveries). */
export interface TestEnvelope extends EventEnvelope {
  type: 'webhook.test';
}

/**
 * Builds the envelope. `receptionist_id` is omitted (not null) for account-level events, as
 * it is documented as absent there.
 */
export function buildEnvelope(event: {
  id: string;
  type: EventType | string;
  receptionistId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
  livemode: boolean;
}): EventEnvelope {
  // Key order is part of what subscribers see (and sign over): id, event, receptionist_id?,
  // data, timestamp, livemode (added last, so the fields before keep their places).
  return {
    id: event.id,
    event: event.type,
    ...(event.receptionistId ? { receptionist_id: event.receptionistId } : {}),
    data: event.data,
    timestamp: event.createdAt.toISOString(),
    livemode: event.livemode,
  };
}

/** The synthetic event sent by POST /webhooks/{id}/test. */
export function buildTestEnvelope(
  id: string,
  subscriptionId: string,
  at: Date,
  livemode = true,
): TestEnvelope {
  return {
    id,
    type: 'webhook.test',
    event: 'webhook.test',
    data: { subscription_id: subscriptionId, message: 'This is a test event from Switchboard.' },
    timestamp: at.toISOString(),
    livemode,
  };
}
