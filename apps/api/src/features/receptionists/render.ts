import type { Receptionist } from '@switchboard/db';

/**
 * The public read shape of a receptionist (docs/API.md, Receptionists). The legacy webhook's signing
 * secret and the provisioning bookkeeping are not part of the domain object, so they cannot
 * leak through here.
 */
export const renderReceptionist = (r: Receptionist) => ({
  id: r.id,
  name: r.name,
  status: r.status,
  phone_number: r.phoneNumber,
  assistant_id: r.assistantId,
  plan: r.plan,
  greeting: r.greeting,
  webhook_url: r.webhookUrl,
  error: r.error && {
    code: r.error.code,
    message: r.error.message,
    failed_at: r.error.failedAt.toISOString(),
  },
  created_at: r.createdAt.toISOString(),
  provisioned_at: r.provisionedAt?.toISOString() ?? null,
});
