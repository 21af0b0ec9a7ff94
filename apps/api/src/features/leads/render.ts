import type { Lead } from '@switchboard/db';

/** The public read shape of a lead (docs/API.md, Leads). */
export const renderLead = (l: Lead) => ({
  id: l.id,
  name: l.name,
  phone: l.phone,
  email: l.email,
  source: l.source,
  status: l.status,
  notes: l.notes,
  tags: l.tags,
  metadata: l.metadata,
  receptionist_id: l.receptionistId,
  created_at: l.createdAt.toISOString(),
  updated_at: l.updatedAt.toISOString(),
  livemode: l.livemode,
});
