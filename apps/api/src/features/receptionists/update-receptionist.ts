import type { FromSchema } from 'json-schema-to-ts';
import type { Deps } from '../../deps';
import { insufficientScope, notFound } from '../../errors';
import { hasScope } from '../../http/auth';
import type { Receptionist, Scope, VersionCondition } from '@switchboard/db';
import { checkSubscriptionUrl } from '../../shared/webhook-url';
import type { updateReceptionistBodySchema } from './schemas';

export type UpdateReceptionistBody = FromSchema<typeof updateReceptionistBodySchema>;

/**
 * PATCH: name and greeting need write; setting or clearing webhook_url needs admin. The
 * key's scope is checked before anything about the receptionist is looked up, so a 403 says
 * nothing about whether the id exists; then the URL policy; then another tenant's id is a 404,
 * and a version `condition` refused by the update itself a 412 (VersionMismatch).
 */
export async function updateReceptionist(
  deps: Deps,
  auth: { tenantId: string; scopes: readonly Scope[] },
  id: string,
  body: UpdateReceptionistBody,
  condition: VersionCondition,
): Promise<Receptionist> {
  if (body.webhook_url !== undefined && !hasScope(auth.scopes, 'admin')) {
    throw insufficientScope('admin');
  }
  const webhookUrl =
    typeof body.webhook_url === 'string'
      ? await checkSubscriptionUrl(body.webhook_url, deps, 'webhook_url')
      : body.webhook_url;
  const updated = await deps.stores.receptionists.update(
    auth.tenantId,
    id,
    { name: body.name, greeting: body.greeting, webhookUrl },
    condition,
  );
  if (!updated) throw notFound('receptionist', 'id');
  return updated;
}
