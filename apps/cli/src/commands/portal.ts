import { parseOptions, required, UsageError } from '../args';
import type { CliContext } from '../context';

/** A CSP source of an origin: https (or http for localhost), host or `*.` host, optional port. */
const ORIGIN =
  /^(https:\/\/(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|http:\/\/(localhost|127\.0\.0\.1))(:\d{1,5})?$/;

/**
 * Sets the origins allowed to frame a tenant's portal page (its `frame-ancestors`), or with
 * `--none` allows none (the default). Applies from the page's next load.
 */
export async function tenantPortalOrigins(ctx: CliContext, argv: string[]): Promise<object> {
  const o = parseOptions(argv, ['id', 'origins', 'none'], ['none']);
  const id = required(o, 'id');
  let origins: string[] = [];
  if (o.none !== undefined) {
    if (o.origins !== undefined) throw new UsageError('--none takes no --origins');
  } else {
    origins = required(o, 'origins')
      .split(/[,\s]+/)
      .filter(Boolean)
      .map((s) => s.toLowerCase().replace(/\/$/, ''));
    for (const origin of origins) {
      if (!ORIGIN.test(origin)) {
        throw new UsageError(
          `"${origin}" is not an origin (https://host[:port], https://*.host, or http://localhost)`,
        );
      }
    }
    if (origins.length > 20) throw new UsageError('at most 20 origins');
  }
  const tenant = await ctx.stores.tenants.setPortalOrigins(id, [...new Set(origins)]);
  if (!tenant) throw new UsageError(`no tenant ${id}`);
  return { id: tenant.id, name: tenant.name, portal_origins: tenant.portalOrigins };
}
