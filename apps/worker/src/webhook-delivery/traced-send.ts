import type { ClaimedDelivery } from '@switchboard/db';
import {
  contextFromTraceparent,
  currentTraceId,
  inSpan,
  markFailed,
  SpanKind,
  traceHeaders,
} from '@switchboard/telemetry';
import type { SendRequest, SendResult, WebhookSender } from '@switchboard/webhooks';

/**
 * One delivery attempt as a span (`webhook.attempt`, a client span) in the trace of its
 * event: a child of the outbox write stored with the event (unless a span is active
 * already). The span records the receiver's status code (or the error) and is failed when
 * the attempt is. The request carries the span's W3C
 * `traceparent` (docs/decisions/0061-metrics-logs-traces.md), so a subscriber's own tracing can
 * join; with tracing off nothing is added. The sender never throws for a failed delivery.
 */
export function sendTraced(
  sender: WebhookSender,
  request: SendRequest,
  claimed: ClaimedDelivery,
  attempt: number,
): Promise<SendResult> {
  const { delivery, event } = claimed;
  // Neither the relay nor a delivery job runs its attempt in a span of its own.
  const parent = currentTraceId() ? undefined : contextFromTraceparent(event.traceparent);
  const attributes = {
    'http.request.method': 'POST',
    'switchboard.delivery_id': delivery.id,
    'switchboard.event_id': event.id,
    'switchboard.attempt': attempt,
  };
  return inSpan('webhook.attempt', { kind: SpanKind.CLIENT, parent, attributes }, async (span) => {
    const result = await sender.send({
      ...request,
      headers: { ...request.headers, ...traceHeaders() },
    });
    if (result.status_code !== null) {
      span.setAttribute('http.response.status_code', result.status_code);
    }
    if (!result.delivered) markFailed(span, result.error ?? undefined);
    return result;
  });
}
