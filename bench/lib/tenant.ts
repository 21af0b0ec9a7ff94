import { ApiKeysStore, type Knex, ReceptionistsStore, TenantsStore } from '@switchboard/db';
import { LIFTED_KEY_LIMIT } from './env';

export interface BenchTenant {
  tenantId: string;
  apiKey: string;
  receptionistId: string;
  /** The receptionist's phone number. */
  phone: string;
}

/**
 * One tenant named `tenantName` whose per-key limit is lifted (a run measures the limiter,
 * never its 429s), a write key (write includes read) named `keyName` and a ready receptionist.
 */
export async function createWriteTenant(
  knex: Knex,
  tenantName: string,
  keyName: string,
): Promise<BenchTenant> {
  const tenants = new TenantsStore(knex);
  const tenant = await tenants.create({ name: tenantName });
  await tenants.setRateLimit(tenant.id, LIFTED_KEY_LIMIT);
  const { key } = await new ApiKeysStore(knex).create({
    tenantId: tenant.id,
    scopes: ['write'],
    name: keyName,
  });
  const phone = '+14155550100';
  const receptionist = await new ReceptionistsStore(knex).create({
    tenantId: tenant.id,
    name: 'Front Desk',
    status: 'ready',
    phoneNumber: phone,
    provisionedAt: new Date(),
  });
  return { tenantId: tenant.id, apiKey: key, receptionistId: receptionist.id, phone };
}
