import { parseOptions, required, UsageError } from '../args';
import type { CliContext } from '../context';
import { renderReceptionist } from '../render';
import { tenantOf } from './basic';

export async function receptionistCreate(ctx: CliContext, argv: string[]): Promise<object> {
  const o = parseOptions(argv, ['tenant', 'name']);
  const tenantId = required(o, 'tenant');
  const name = required(o, 'name');
  if (!(await ctx.stores.tenants.get(tenantId))) throw new UsageError(`no tenant ${tenantId}`);
  // Loaded here only: it brings the event catalog and its validators (emit).
  const { createReadyReceptionist } = await import('./provision');
  return renderReceptionist(await createReadyReceptionist(ctx, tenantId, name));
}

export async function receptionistList(ctx: CliContext, argv: string[]): Promise<object> {
  const tenantId = await tenantOf(ctx, argv);
  return {
    receptionists: (await ctx.stores.receptionists.listAllForTenant(tenantId)).map(
      renderReceptionist,
    ),
  };
}
