import type { FromSchema } from 'json-schema-to-ts';
import type { SendRefusal, Sms } from '@switchboard/db';
import { currentRequestId } from '@switchboard/logger';
import { enqueueFromRequest, type SmsJob } from '@switchboard/queues';
import { safeSmsText, smsSegments } from '@switchboard/sms';
import type { Deps } from '../../deps';
import { ApiError, invalidParameter, notFound, unprocessable } from '../../errors';
import { replayOrReject, type IdempotencyScope, type IdempotentResponse } from '../../idempotency';
import { renderAcceptedSms } from './render';
import type { sendSmsBodySchema } from './schemas';

export type SendSmsBody = FromSchema<typeof sendSmsBodySchema>;

const refusal = (reason: SendRefusal, receptionistId: string, to: string): ApiError => {
  switch (reason) {
    case 'unknown_receptionist':
      return notFound('receptionist', 'receptionist_id');
    case 'receptionist_not_ready':
      return new ApiError(
        409,
        'invalid_request_error',
        'receptionist_not_ready',
        `Receptionist ${receptionistId} is not ready; SMS are sent from a ready receptionist's number`,
        'receptionist_id',
      );
    case 'recipient_opted_out':
      return unprocessable(
        'recipient_opted_out',
        `${to} opted out of SMS from this account (replied STOP); nothing was sent`,
        'to',
      );
  }
};

/**
 * Accepts an outbound SMS, of the key's mode (`livemode`: a test-mode key's message is sent by the
 * simulated carrier only and never metered, docs/API.md, Test mode). Invariants: nothing is stored
 * for a recipient who opted out of the tenant (the opt-out check is part of the insert); the row
 * is committed before this returns (so before the 202); the send job is added only after that
 * commit, and a failure to add it still answers 202, because the SMS reconciler enqueues queued
 * messages whose job is missing. With an Idempotency-Key, a key that already holds a message is a
 * replay of it (or a 422 when the body differs), decided by Postgres whatever Redis remembers.
 */
export async function sendSms(
  deps: Deps,
  tenantId: string,
  body: SendSmsBody,
  idempotency: IdempotencyScope | null,
  livemode: boolean,
): Promise<IdempotentResponse> {
  // Text that Postgres (NUL) or the outbox's jsonb (unpaired surrogates) cannot store.
  if (safeSmsText(body.message) !== body.message) {
    throw invalidParameter('message', 'message must be Unicode text without NUL characters');
  }
  const sendAt = scheduledFor(body.send_at);
  const input = {
    sendAt,
    tenantId,
    receptionistId: body.receptionist_id,
    to: body.to,
    message: body.message,
    segments: smsSegments(body.message).segments,
    metadata: body.metadata ?? {},
    idempotency,
    at: new Date(),
    livemode,
  };
  // Nothing stored: say why. Should the obstacle be gone by then (the recipient opted back
  // in between the two statements), the insert is tried once more.
  for (let attempt = 1; ; attempt++) {
    const result = await deps.stores.sms.createOutbound(input);
    if (result && !result.created) {
      replayOrReject(result.sms.idempotencyFingerprint, idempotency);
      return accepted(result.sms, true);
    }
    if (result) {
      // A scheduled message is queued (and its job added) by the worker when it is due.
      if (!sendAt) await enqueueSend(deps, result.sms.id);
      return accepted(result.sms, false);
    }
    const reason = await deps.stores.sms.whyNotSendable(
      deps.knex,
      tenantId,
      body.receptionist_id,
      body.to,
    );
    if (reason || attempt === 2) {
      throw refusal(reason ?? 'recipient_opted_out', body.receptionist_id, body.to);
    }
  }
}

/** Scheduled sends go 60 s to 30 days ahead (docs/API.md, SMS). */
const MIN_AHEAD_MS = 60_000;
const MAX_AHEAD_MS = 30 * 86_400_000;

/** `send_at` as a Date, or null to send now; out of range → 400 on `send_at`. */
function scheduledFor(sendAt: string | undefined): Date | null {
  if (sendAt === undefined) return null;
  const at = new Date(sendAt);
  const ahead = at.getTime() - Date.now();
  if (Number.isNaN(ahead) || ahead < MIN_AHEAD_MS || ahead > MAX_AHEAD_MS) {
    throw invalidParameter(
      'send_at',
      'send_at must be an ISO 8601 date-time 60 seconds to 30 days ahead',
    );
  }
  return at;
}

const accepted = (sms: Sms, replayed: boolean): IdempotentResponse => ({
  status: 202,
  body: renderAcceptedSms(sms),
  location: `/api/v1/sms/${sms.id}`,
  replayed,
});

/**
 * Adds the send job (jobId = message id, so a second add is a no-op); never fails the request.
 * The job carries this request's id (the worker's lines about the send carry it) and, when
 * tracing is on, its trace (added with it: the worker's send and its sms.sent continue it).
 */
async function enqueueSend(deps: Deps, smsId: string): Promise<void> {
  try {
    const data: SmsJob = { v: 1, smsId };
    const requestId = currentRequestId();
    if (requestId) data.requestId = requestId;
    await enqueueFromRequest(deps.queues, deps.redis, 'sms', { data });
  } catch (err) {
    deps.logger.warn({ err, smsId }, 'send job not added; the SMS reconciler will enqueue it');
  }
}
