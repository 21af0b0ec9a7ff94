import type { FromSchema } from 'json-schema-to-ts';
import type { AcceptedOutboundCall, Receptionist } from '@switchboard/db';
import { currentRequestId } from '@switchboard/logger';
import { enqueueFromRequest } from '@switchboard/queues';
import type { Deps } from '../../deps';
import { ApiError, notFound } from '../../errors';
import { replayOrReject, type IdempotencyScope, type IdempotentResponse } from '../../idempotency';
import type { outboundCallBodySchema } from './schemas';

export type OutboundCallBody = FromSchema<typeof outboundCallBodySchema>;

/**
 * The 202 body. Built from the call's immutable columns and the request body, so a replay
 * (which by its fingerprint has the same body) answers exactly what the first request did,
 * whatever happened to the call since.
 */
export const renderAcceptedCall = (c: AcceptedOutboundCall, customerName: string | null) => ({
  id: c.id,
  status: 'queued' as const,
  direction: 'outbound' as const,
  receptionist_id: c.receptionistId,
  from: c.from,
  to: c.to,
  customer_name: customerName,
  created_at: c.createdAt.toISOString(),
  livemode: c.livemode,
});

const receptionistNotReady = (r: Receptionist) =>
  new ApiError(
    409,
    'invalid_request_error',
    'receptionist_not_ready',
    `Receptionist ${r.id} is not ready (status ${r.status}${r.phoneNumber ? '' : ', no phone number'}); outbound calls need a ready receptionist`,
    'receptionist_id',
  );

/**
 * Accepts an outbound call. Invariants: the row is committed before this returns (so before
 * the 202 is sent); the dial job is added only after that commit, and a failure to add it
 * still answers 202, because the dialler's reconciler enqueues queued calls whose job is
 * missing. With an Idempotency-Key, a key that already holds a call is a replay of that call
 * (or a 422 when the body differs), decided by Postgres whatever Redis remembers.
 */
export async function startOutboundCall(
  deps: Deps,
  tenantId: string,
  body: OutboundCallBody,
  idempotency: IdempotencyScope | null,
  livemode: boolean,
): Promise<IdempotentResponse> {
  const { calls, receptionists } = deps.stores;
  const customerName = body.customer_name ?? null;
  // A key that already holds a call (whatever became of the receptionist since) is a replay.
  const replay = (call: AcceptedOutboundCall): IdempotentResponse => {
    replayOrReject(call.idempotencyFingerprint, idempotency);
    return accepted(call, customerName, true);
  };

  const result = await calls.createOutbound({
    tenantId,
    receptionistId: body.receptionist_id,
    to: body.to,
    customerName,
    purpose: body.purpose ?? null,
    metadata: body.metadata ?? {},
    idempotency,
    at: new Date(),
    livemode,
  });
  if (result && !result.created) return replay(result.call);
  if (result) {
    await enqueueDial(deps, result.call.id);
    return accepted(result.call, customerName, false);
  }
  // Nothing inserted: say why (the fast path above is one statement, this one is rare).
  const receptionist = await receptionists.get(deps.knex, tenantId, body.receptionist_id);
  if (!receptionist) throw notFound('receptionist', 'receptionist_id');
  throw receptionistNotReady(receptionist);
}

const accepted = (
  call: AcceptedOutboundCall,
  customerName: string | null,
  replayed: boolean,
): IdempotentResponse => ({
  status: 202,
  body: renderAcceptedCall(call, customerName),
  location: `/api/v1/calls/${call.id}`,
  replayed,
});

/**
 * Adds the dial job (jobId = call id, so a second add is a no-op); never fails the request.
 * The job carries this request's id: the worker's lines about the dial carry it too.
 */
async function enqueueDial(deps: Deps, callId: string): Promise<void> {
  try {
    const requestId = currentRequestId();
    await enqueueFromRequest(deps.queues, deps.redis, 'outboundCalls', {
      data: requestId ? { v: 1, callId, requestId } : { v: 1, callId },
    });
  } catch (err) {
    deps.logger.warn({ err, callId }, 'dial job not added; the dialler reconciler will enqueue it');
  }
}
