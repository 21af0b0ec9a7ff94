import type { FromSchema } from 'json-schema-to-ts';
import type { Receptionist } from '@switchboard/db';
import type { Deps } from '../../deps';
import { replayOrReject, type IdempotencyScope, type IdempotentResponse } from '../../idempotency';
import { enqueueFirstAttempt } from './enqueue';
import type { createReceptionistBodySchema } from './schemas';

export type CreateReceptionistBody = FromSchema<typeof createReceptionistBodySchema>;

/**
 * The 202 body: the read shape as it is at creation. Built from the row's immutable columns
 * and the request body, so a replay (same key, so same body) answers exactly what the first
 * request did, whatever became of the receptionist since.
 */
const renderAccepted = (r: Receptionist, body: CreateReceptionistBody) => ({
  id: r.id,
  name: body.name,
  status: 'provisioning' as const,
  phone_number: null,
  assistant_id: null,
  plan: body.plan ?? 'standard',
  greeting: body.greeting ?? null,
  webhook_url: null,
  error: null,
  created_at: r.createdAt.toISOString(),
  provisioned_at: null,
});

const accepted = (
  r: Receptionist,
  body: CreateReceptionistBody,
  replayed: boolean,
): IdempotentResponse => ({
  status: 202,
  body: renderAccepted(r, body),
  location: `/api/v1/receptionists/${r.id}`,
  replayed,
});

/**
 * Accepts a receptionist for provisioning. Invariants: the row (status `provisioning`) is
 * committed before this returns; the job of its first attempt is added only after that
 * commit, and a failure to add it still answers 202 because the provisioning reconciler adds
 * it for any receptionist left waiting. With an Idempotency-Key, a key that already holds a
 * receptionist is a replay of it (or a 422 when the body differs), decided by Postgres.
 */
export async function createReceptionist(
  deps: Deps,
  tenantId: string,
  body: CreateReceptionistBody,
  idempotency: IdempotencyScope | null,
): Promise<IdempotentResponse> {
  const result = await deps.stores.provisioningLifecycle.create(deps.knex, {
    tenantId,
    name: body.name,
    greeting: body.greeting ?? null,
    plan: body.plan ?? 'standard',
    areaCode: body.area_code ?? null,
    idempotency,
  });
  if (!result.created) {
    replayOrReject(result.fingerprint, idempotency);
    return accepted(result.receptionist, body, true);
  }
  await enqueueFirstAttempt(deps, result.receptionist.id, 1);
  return accepted(result.receptionist, body, false);
}
