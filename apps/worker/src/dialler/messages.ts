import { randomUUID } from 'node:crypto';
import type { CallEndedMessage } from '@switchboard/telephony';
import type { DialRequest } from './provider';

/** How a call that never connected ended: busy → busy, no_answer → no_answer, error → failed. */
export type NotConnected = 'busy' | 'no_answer' | 'error';

/** The `call.ended` message of an outbound call that never connected: no conversation. */
export function notConnectedMessage(
  req: DialRequest,
  reason: NotConnected,
  endedAt: Date,
): CallEndedMessage {
  return {
    id: `msg_${randomUUID()}`,
    type: 'call.ended',
    receptionist_id: req.receptionistId,
    provider_call_id: req.providerCallId,
    direction: 'outbound',
    from: req.from,
    to: req.to,
    ...(req.customerName ? { customer_name: req.customerName } : {}),
    customer_phone: req.to,
    started_at: req.startedAt.toISOString(),
    occurred_at: endedAt.toISOString(),
    duration_seconds: 0,
    outcome: 'no_outcome',
    end_reason: reason,
    cost: { currency: 'USD', total: 0, breakdown: { telephony: 0, ai: 0, sms: 0 } },
  };
}
