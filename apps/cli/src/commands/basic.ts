import { SCOPES, type RateLimit, type Scope } from '@switchboard/db';
import { parseOptions, required, UsageError } from '../args';
import type { CliContext } from '../context';
import { renderKey, renderTenant } from '../render';

export async function tenantCreate(ctx: CliContext, argv: string[]): Promise<object> {
  const o = parseOptions(argv, ['name', 'plan-minutes']);
  const name = required(o, 'name');
  const planRaw = o['plan-minutes'];
  const planMinutes = planRaw === undefined ? undefined : Number(planRaw);
  if (planMinutes !== undefined && (!Number.isInteger(planMinutes) || planMinutes < 0)) {
    throw new UsageError('--plan-minutes must be a non-negative integer');
  }
  return renderTenant(await ctx.stores.tenants.create({ name, planMinutes }));
}

const positiveInt = (raw: string, flag: string): number => {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1 || n > 1_000_000) {
    throw new UsageError(`--${flag} must be an integer from 1 to 1000000`);
  }
  return n;
};

/**
 * Sets a tenant's API rate limit (a token bucket per key: `--rate` a second, bursts of
 * `--burst`), or with `--default` returns it to the deployment's RATE_LIMIT_* defaults.
 * Every API process applies it from the tenant's next request.
 */
export async function tenantLimits(ctx: CliContext, argv: string[]): Promise<object> {
  const o = parseOptions(argv, ['id', 'rate', 'burst', 'default'], ['default']);
  const id = required(o, 'id');
  let limit: RateLimit | null = null;
  if (o.default !== undefined) {
    if (o.rate !== undefined || o.burst !== undefined) {
      throw new UsageError('--default takes no --rate or --burst');
    }
  } else {
    const perSecond = positiveInt(required(o, 'rate'), 'rate');
    const burst = positiveInt(required(o, 'burst'), 'burst');
    if (burst < perSecond) throw new UsageError('--burst must be at least --rate');
    limit = { perSecond, burst };
  }
  const tenant = await ctx.stores.tenants.setRateLimit(id, limit);
  if (!tenant) throw new UsageError(`no tenant ${id}`);
  return renderTenant(tenant);
}

function parseScopes(raw: string): Scope[] {
  const scopes = raw.split(',').map((s) => s.trim());
  for (const s of scopes) {
    if (!(SCOPES as readonly string[]).includes(s)) {
      throw new UsageError(`unknown scope "${s}" (use read, write, admin)`);
    }
  }
  return [...new Set(scopes)] as Scope[];
}

/** `--mode live` (the default) or `--mode test` (docs/API.md, Test mode). */
function parseMode(raw: string | undefined): boolean {
  if (raw === undefined || raw === 'live') return true;
  if (raw === 'test') return false;
  throw new UsageError(`unknown mode "${raw}" (use live or test)`);
}

export async function keyCreate(ctx: CliContext, argv: string[]): Promise<object> {
  const o = parseOptions(argv, ['tenant', 'scopes', 'name', 'mode']);
  const tenantId = required(o, 'tenant');
  const scopes = parseScopes(required(o, 'scopes'));
  const livemode = parseMode(o.mode);
  if (!(await ctx.stores.tenants.get(tenantId))) throw new UsageError(`no tenant ${tenantId}`);
  const { apiKey, key } = await ctx.stores.apiKeys.create({
    tenantId,
    scopes,
    name: o.name,
    livemode,
  });
  // The plaintext key is printed here once and is never retrievable again.
  return { ...renderKey(apiKey), key };
}

export async function keyRevoke(ctx: CliContext, argv: string[]): Promise<object> {
  const o = parseOptions(argv, ['id']);
  const revoked = await ctx.stores.apiKeys.revoke(required(o, 'id'));
  if (!revoked) throw new UsageError(`no key ${o.id}`);
  // The portal sessions the key created end with it (docs/API.md, Tenant portal).
  return { ...renderKey(revoked.apiKey), portal_sessions_ended: revoked.portalSessionsEnded };
}

export async function tenantList(ctx: CliContext, argv: string[]): Promise<object> {
  parseOptions(argv, []);
  return { tenants: (await ctx.stores.tenants.list()).map(renderTenant) };
}

/** The tenant named by `--tenant`, or a usage error naming it. */
export async function tenantOf(ctx: CliContext, argv: string[]): Promise<string> {
  const tenantId = required(parseOptions(argv, ['tenant']), 'tenant');
  if (!(await ctx.stores.tenants.get(tenantId))) throw new UsageError(`no tenant ${tenantId}`);
  return tenantId;
}

export async function keyList(ctx: CliContext, argv: string[]): Promise<object> {
  const tenantId = await tenantOf(ctx, argv);
  return { keys: (await ctx.stores.apiKeys.listForTenant(tenantId)).map(renderKey) };
}
