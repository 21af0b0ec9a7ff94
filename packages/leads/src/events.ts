import type { Lead } from '@switchboard/db';
import type { EmitInput } from '@switchboard/events';

const common = (lead: Lead) => ({
  lead_id: lead.id,
  name: lead.name,
  phone: lead.phone,
  email: lead.email,
  source: lead.source,
  status: lead.status,
});

/** `lead.created` (docs/API.md, Webhooks); the envelope carries the lead's receptionist, if any. */
export const leadCreated = (lead: Lead): EmitInput<'lead.created'> => ({
  tenantId: lead.tenantId,
  receptionistId: lead.receptionistId,
  livemode: lead.livemode,
  type: 'lead.created',
  data: { ...common(lead), created_at: lead.createdAt.toISOString() },
});

/** `lead.updated` with the public names of the fields that changed (never empty). */
export const leadUpdated = (lead: Lead, changed: string[]): EmitInput<'lead.updated'> => ({
  tenantId: lead.tenantId,
  receptionistId: lead.receptionistId,
  livemode: lead.livemode,
  type: 'lead.updated',
  data: { ...common(lead), updated_at: lead.updatedAt.toISOString(), changed_fields: changed },
});
