import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { newId } from '../ids';
import { newestFirst, type KeysetPage, type PageRequest } from '../keyset';
import { rateLimitOf, type RateLimit } from './tenants-store';

const TABLE = 'portal_sessions';

/** What a portal session may do (docs/API.md, Tenant portal). */
export type PortalCapability = 'view' | 'manage_endpoints' | 'manage_secrets' | 'recover';
export const PORTAL_CAPABILITIES: readonly PortalCapability[] = [
  'view',
  'manage_endpoints',
  'manage_secrets',
  'recover',
];
/** What a link grants when its creator names no capabilities. */
export const DEFAULT_PORTAL_CAPABILITIES: readonly PortalCapability[] = [
  'view',
  'manage_endpoints',
  'recover',
];

/**
 * The capabilities a new session gets for those asked (the default when none): `view` always
 * (a page that cannot read cannot show anything), in canonical order. The API and the
 * operator CLI both grant through this.
 */
export function grantPortalCapabilities(
  asked: readonly PortalCapability[] | undefined,
): PortalCapability[] {
  const wanted = new Set<PortalCapability>([...(asked ?? DEFAULT_PORTAL_CAPABILITIES), 'view']);
  return PORTAL_CAPABILITIES.filter((c) => wanted.has(c));
}

export interface PortalSession {
  id: string;
  tenantId: string;
  /**
   * The API key that created it; null for a session the operator CLI made (`portal link`, no
   * key: it ends when it expires or is revoked) or one made before keys were recorded.
   */
  createdByKeyId: string | null;
  capabilities: PortalCapability[];
  /** null: every subscription of the tenant. */
  subscriptionIds: string[] | null;
  expiresAt: Date;
  codeUsedAt: Date | null;
  revokedAt: Date | null;
  /** When its token last authenticated a request (recorded at most once a minute). */
  lastUsedAt: Date | null;
  createdAt: Date;
}

/** A session as authentication reads it: with its tenant's name and rate limit. */
export interface ActivePortalSession extends PortalSession {
  tenantName: string;
  rateLimit: RateLimit | null;
}

interface PortalSessionRow {
  id: string;
  tenant_id: string;
  created_by_key_id: string | null;
  capabilities: PortalCapability[];
  subscription_ids: string[] | null;
  expires_at: Date;
  code_used_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

const COLUMNS = [
  'id',
  'tenant_id',
  'created_by_key_id',
  'capabilities',
  'subscription_ids',
  'expires_at',
  'code_used_at',
  'revoked_at',
  'last_used_at',
  'created_at',
] as const;

const toSession = (r: PortalSessionRow): PortalSession => ({
  id: r.id,
  tenantId: r.tenant_id,
  createdByKeyId: r.created_by_key_id,
  capabilities: r.capabilities,
  subscriptionIds: r.subscription_ids,
  expiresAt: r.expires_at,
  codeUsedAt: r.code_used_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
  createdAt: r.created_at,
});

/**
 * The invariant of a live session `s`: not revoked, not expired, and its creator key not
 * revoked. The key's revocation also marks its sessions revoked (endPortalSessionsOfKey), but
 * a session created by a request that authenticated just before the revocation committed can
 * be inserted after that UPDATE ran; reading the key here refuses it too, so no session ever
 * outlives the key that made it, whichever way the key was revoked.
 */
const LIVE = `s.revoked_at IS NULL AND s.expires_at > now()
  AND NOT EXISTS (SELECT 1 FROM api_keys k
                   WHERE k.id = s.created_by_key_id AND k.revoked_at IS NOT NULL)`;

/**
 * Ends every live session created by the key `keyId` (revoked_at = now), in the caller's
 * transaction: ApiKeysStore.revoke runs it with the key's own revocation. Returns how many.
 */
export async function endPortalSessionsOfKey(db: Knex, keyId: string): Promise<number> {
  return db(TABLE)
    .where({ created_by_key_id: keyId })
    .whereNull('revoked_at')
    .andWhere('expires_at', '>', db.fn.now())
    .update({ revoked_at: db.fn.now() });
}

const TOUCH_EVERY_MS = 60_000;

/** A secret of `prefix` + 64 hex characters (256 random bits). */
const secret = (prefix: string): string => `${prefix}${randomBytes(32).toString('hex')}`;
const hash = (value: string): string => createHash('sha256').update(value).digest('hex');

/** Codes and tokens are never stored: only their SHA-256, like API keys. */
export class PortalSessionsStore {
  /** When this process last recorded each session's use: at most one UPDATE a minute each. */
  private readonly touched = new Map<string, number>();

  constructor(private readonly db: Knex) {}

  /** A new session and its one-use code (returned here only). */
  async create(input: {
    tenantId: string;
    /** null: made by the operator, with no key (see PortalSession.createdByKeyId). */
    createdByKeyId: string | null;
    capabilities: PortalCapability[];
    subscriptionIds: string[] | null;
    ttlSeconds: number;
  }): Promise<{ session: PortalSession; code: string }> {
    const code = secret('pc_');
    const [row] = await this.db(TABLE)
      .insert({
        id: newId('ps'),
        tenant_id: input.tenantId,
        created_by_key_id: input.createdByKeyId,
        code_hash: hash(code),
        capabilities: input.capabilities,
        subscription_ids: input.subscriptionIds,
        expires_at: this.db.raw(`now() + make_interval(secs => ?)`, [input.ttlSeconds]),
      })
      .returning(COLUMNS);
    return { session: toSession(row as PortalSessionRow), code };
  }

  /**
   * Trades a code for a token, once: one UPDATE marks the code used only if it is unused and
   * its session live (LIVE), so two concurrent exchanges of one code cannot both win.
   */
  async exchange(
    code: string,
  ): Promise<{ session: ActivePortalSession; token: string } | undefined> {
    const token = secret('pt_');
    const result = await this.db.raw<{ rows: Array<PortalSessionRow & { tenant_name: string }> }>(
      `UPDATE ${TABLE} s SET code_used_at = now(), token_hash = ?
         FROM tenants t
        WHERE t.id = s.tenant_id AND s.code_hash = ? AND s.code_used_at IS NULL AND ${LIVE}
        RETURNING ${COLUMNS.map((c) => `s.${c}`).join(', ')}, t.name AS tenant_name,
                  t.rate_limit_per_second, t.rate_limit_burst`,
      [hash(token), hash(code)],
    );
    const row = result.rows[0] as
      | (PortalSessionRow & {
          tenant_name: string;
          rate_limit_per_second: number | null;
          rate_limit_burst: number | null;
        })
      | undefined;
    if (!row) return undefined;
    return {
      session: {
        ...toSession(row),
        tenantName: row.tenant_name,
        rateLimit: rateLimitOf(row.rate_limit_per_second, row.rate_limit_burst),
      },
      token,
    };
  }

  /** Why a code cannot be traded (for the refusal's message): used, expired or unknown. */
  async refusalOf(code: string): Promise<'used' | 'expired' | 'unknown'> {
    const row = (await this.db(TABLE)
      .where({ code_hash: hash(code) })
      .first('code_used_at', 'revoked_at', this.db.raw('expires_at <= now() AS expired'))) as
      { code_used_at: Date | null; revoked_at: Date | null; expired: boolean } | undefined;
    if (!row) return 'unknown';
    if (row.code_used_at) return 'used';
    return 'expired';
  }

  /**
   * The live session of a token, read fresh on every request (no cache), so a revocation of
   * the session or of its creator key, or an expiry, applies from the very next request.
   */
  async findActiveByToken(token: string): Promise<ActivePortalSession | undefined> {
    const row = (await this.db(`${TABLE} as s`)
      .join('tenants as t', 't.id', 's.tenant_id')
      .select(
        ...COLUMNS.map((c) => `s.${c}`),
        't.name as tenant_name',
        't.rate_limit_per_second',
        't.rate_limit_burst',
      )
      .where('s.token_hash', hash(token))
      .whereRaw(LIVE)
      .first()) as
      | (PortalSessionRow & {
          tenant_name: string;
          rate_limit_per_second: number | null;
          rate_limit_burst: number | null;
        })
      | undefined;
    return (
      row && {
        ...toSession(row),
        tenantName: row.tenant_name,
        rateLimit: rateLimitOf(row.rate_limit_per_second, row.rate_limit_burst),
      }
    );
  }

  /** Revokes a session of the tenant; false when there is none. Revoking twice is harmless. */
  async revoke(tenantId: string, id: string): Promise<boolean> {
    const count = await this.db(TABLE)
      .where({ tenant_id: tenantId, id })
      .update({ revoked_at: this.db.raw('coalesce(revoked_at, now())') });
    return count > 0;
  }

  /** The tenant's live sessions (LIVE), newest first, a keyset page at a time. */
  async listLive(tenantId: string, page: PageRequest): Promise<KeysetPage<PortalSession>> {
    const query = this.db(`${TABLE} as s`)
      .select(...COLUMNS.map((c) => `s.${c}`))
      .where('s.tenant_id', tenantId)
      .whereRaw(LIVE);
    return newestFirst(query, page, toSession, { time: 'created_at', alias: 's' });
  }

  /** Revokes every live session of the tenant (as listLive counts them); returns how many. */
  async revokeAll(tenantId: string): Promise<number> {
    return this.db(`${TABLE} as s`)
      .where('s.tenant_id', tenantId)
      .whereRaw(LIVE)
      .update({ revoked_at: this.db.fn.now() });
  }

  /** Records a token's use at most once a minute per session, so authentication stays a read. */
  async touch(id: string): Promise<void> {
    const now = Date.now();
    if (now - (this.touched.get(id) ?? 0) < TOUCH_EVERY_MS) return;
    if (this.touched.size > 10_000) this.touched.clear();
    this.touched.set(id, now);
    await this.db(TABLE)
      .where({ id })
      .andWhere((q) =>
        q.whereNull('last_used_at').orWhereRaw("last_used_at < now() - interval '1 minute'"),
      )
      .update({ last_used_at: this.db.fn.now() });
  }
}
