import type { ReceptionistStatus, Scope } from '@switchboard/db';
import type { TestContext } from './context';

/** What a fixture receptionist may differ in; it is a `ready` 'Front Desk' with no number unless told. */
export interface ReceptionistFields {
  name?: string;
  status?: ReceptionistStatus;
  phoneNumber?: string;
  greeting?: string;
}

/**
 * A receptionist of `tenantId`, straight from the store: provisioning runs in the worker, and
 * a `ready` one (the default) is what calls, texts, campaigns and events need. Returns its id.
 */
export async function addReceptionist(
  ctx: TestContext,
  tenantId: string,
  fields: ReceptionistFields = {},
): Promise<string> {
  const { id } = await ctx.deps.stores.receptionists.create({
    tenantId,
    name: fields.name ?? 'Front Desk',
    status: fields.status ?? 'ready',
    phoneNumber: fields.phoneNumber,
    greeting: fields.greeting,
  });
  return id;
}

/** A tenant with one key and one receptionist. */
export interface ReceptionistTenant {
  tenantId: string;
  key: string;
  /** The key's `Authorization` header value. */
  auth: string;
  /** The receptionist's id. */
  rcp: string;
}

/**
 * A new tenant with a key of `scopes` (admin unless told) and a ready receptionist
 * (see `addReceptionist`): one call instead of a tenant, a key and a store insert.
 */
export async function receptionistTenant(
  ctx: TestContext,
  opts: ReceptionistFields & { scopes?: Scope[] } = {},
): Promise<ReceptionistTenant> {
  const { scopes, ...fields } = opts;
  const tenant = await ctx.tenant(scopes);
  return { ...tenant, rcp: await addReceptionist(ctx, tenant.tenantId, fields) };
}
