import {
  grantPortalCapabilities,
  PORTAL_CAPABILITIES,
  type PortalCapability,
} from '@switchboard/db';
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

const isCapability = (c: string): c is PortalCapability =>
  (PORTAL_CAPABILITIES as readonly string[]).includes(c);

/**
 * A one-use portal link for a tenant, as `POST /api/v1/portal/sessions` makes one but with no
 * API key: the session has no creator key (it ends when it expires or is revoked, not with a
 * key) and may hold any capability, `manage_secrets` included. Its code is printed only here.
 */
export async function portalLink(ctx: CliContext, argv: string[]): Promise<object> {
  const o = parseOptions(argv, ['tenant', 'capabilities', 'ttl', 'base-url']);
  const tenantId = required(o, 'tenant');
  let asked: PortalCapability[] | undefined;
  if (o.capabilities !== undefined) {
    const words = o.capabilities.split(/[,\s]+/).filter(Boolean);
    const unknown = words.filter((c) => !isCapability(c));
    if (!words.length || unknown.length) {
      throw new UsageError(`--capabilities takes a list of ${PORTAL_CAPABILITIES.join(', ')}`);
    }
    asked = words.filter(isCapability);
  }
  const ttl = Number(o.ttl ?? 3600);
  if (!Number.isInteger(ttl) || ttl < 300 || ttl > 86_400) {
    throw new UsageError('--ttl takes whole seconds, 300 to 86400');
  }
  const base = (o['base-url'] ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/\s]+$/.test(base)) {
    throw new UsageError('--base-url takes the scheme and host of the API (http://host:port)');
  }
  if (!(await ctx.stores.tenants.get(tenantId))) throw new UsageError(`no tenant ${tenantId}`);
  const { session, code } = await ctx.stores.portalSessions.create({
    tenantId,
    createdByKeyId: null,
    capabilities: grantPortalCapabilities(asked),
    subscriptionIds: null,
    ttlSeconds: ttl,
  });
  return {
    id: session.id,
    tenant_id: tenantId,
    url: `${base}/portal#code=${code}`,
    expires_at: session.expiresAt.toISOString(),
    capabilities: session.capabilities,
  };
}
