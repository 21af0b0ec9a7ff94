import type { ApiKey, Receptionist, Tenant } from '@switchboard/db';

/** JSON shapes printed by the CLI (CONTRACT.md section 10); snake_case like the API. */
export const renderTenant = (t: Tenant) => ({
  id: t.id,
  name: t.name,
  plan_minutes: t.planMinutes,
  created_at: t.createdAt.toISOString(),
});

export const renderKey = (k: ApiKey) => ({
  id: k.id,
  tenant_id: k.tenantId,
  name: k.name,
  prefix: k.displayPrefix,
  scopes: k.scopes,
  created_at: k.createdAt.toISOString(),
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

export const renderReceptionist = (r: Receptionist) => ({
  id: r.id,
  tenant_id: r.tenantId,
  name: r.name,
  status: r.status,
  phone_number: r.phoneNumber,
  assistant_id: r.assistantId,
  plan: r.plan,
  created_at: r.createdAt.toISOString(),
  provisioned_at: r.provisionedAt?.toISOString() ?? null,
});
