import type { Deps } from '../../deps';
import { conflict, notFound } from '../../errors';
import { enqueueFirstAttempt } from './enqueue';
import { renderReceptionist } from './render';

/**
 * Retries the provisioning of a receptionist in `error`: a new round of attempts, committed
 * before its first job is added. Another tenant's id is a 404; any other state is a 409.
 */
export async function reprovisionReceptionist(deps: Deps, tenantId: string, id: string) {
  const started = await deps.stores.provisioningLifecycle.reprovision(deps.knex, tenantId, id);
  if (!started) {
    const found = await deps.stores.receptionists.get(deps.knex, tenantId, id);
    if (!found) throw notFound('receptionist', 'id');
    throw conflict(
      'invalid_state',
      `Receptionist ${id} is ${found.status}; only a receptionist in error can be provisioned again`,
    );
  }
  await enqueueFirstAttempt(deps, id, started.round);
  return renderReceptionist(started.receptionist);
}
