import type { CliContext } from '../context';
import { renderReceptionist, renderTenant } from '../render';
import { createReadyReceptionist } from './provision';

export const DEMO_TENANT_NAME = 'Demo Plumbing & Heating';
const DEMO_RECEPTIONISTS = ['Front Desk', 'After Hours', 'Emergency Line'];

/**
 * Creates the demo tenant with receptionists the first time; later runs reuse it. Every
 * run mints a fresh admin key, because a key is only ever shown when it is created.
 */
export async function seedDemo(ctx: CliContext, progress: (line: string) => void): Promise<object> {
  let tenant = await ctx.tenants.findByName(DEMO_TENANT_NAME);
  const created = !tenant;
  if (!tenant) {
    tenant = await ctx.tenants.create({ name: DEMO_TENANT_NAME, planMinutes: 2000 });
    for (const name of DEMO_RECEPTIONISTS) {
      await createReadyReceptionist(ctx, tenant.id, name);
    }
    progress(`created demo tenant ${tenant.id} with ${DEMO_RECEPTIONISTS.length} receptionists`);
  } else {
    progress(`demo tenant ${tenant.id} already exists; minting a new admin key`);
  }
  const receptionists = await ctx.receptionists.listAllForTenant(tenant.id);
  const { apiKey, key } = await ctx.apiKeys.create({
    tenantId: tenant.id,
    scopes: ['admin'],
    name: 'demo admin',
  });
  return {
    created,
    tenant: renderTenant(tenant),
    api_key: { id: apiKey.id, key, scopes: apiKey.scopes },
    receptionists: receptionists.map(renderReceptionist),
  };
}
