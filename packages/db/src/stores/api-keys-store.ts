import { createHash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Knex } from 'knex';
import { Batcher, oneBatchInFlight } from '../batcher';
import { newId } from '../ids';
import { runPrepared } from '../prepared';
import { NOTIFY_API_KEY_CHANGE_SQL } from './api-key-changes';
import { endPortalSessionsOfKey } from './portal-sessions-store';
import { rateLimitOf, type RateLimit } from './tenants-store';

const TABLE = 'api_keys';

export type Scope = 'read' | 'write' | 'admin';
export const SCOPES: readonly Scope[] = ['read', 'write', 'admin'];

export interface ApiKey {
  id: string;
  tenantId: string;
  name: string;
  displayPrefix: string;
  scopes: Scope[];
  /** false: a test-mode key (`sk_test_`); what it makes is test data (docs/API.md, Test mode). */
  livemode: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A key as authentication reads it: with its tenant's rate limit (null: the defaults). */
export interface ActiveApiKey extends ApiKey {
  rateLimit: RateLimit | null;
}

interface ApiKeyRow {
  id: string;
  tenant_id: string;
  name: string;
  key_hash: string;
  display_prefix: string;
  scopes: Scope[];
  livemode: boolean;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

type KeyWithLimitRow = ApiKeyRow & {
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
};

const toApiKey = (r: ApiKeyRow): ApiKey => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  displayPrefix: r.display_prefix,
  scopes: r.scopes,
  livemode: r.livemode,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * `sk_live_` (or `sk_test_` for a test-mode key) + 40 base62 characters (about 238 bits);
 * rejection sampling keeps it unbiased.
 */
function generateKey(livemode: boolean): string {
  let out = '';
  while (out.length < 40) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && out.length < 40) out += BASE62[byte % 62];
    }
  }
  return `${livemode ? 'sk_live_' : 'sk_test_'}${out}`;
}

/** Only this hash is stored: a database leak does not leak usable keys. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

const TOUCH_EVERY_MS = 60_000;

/**
 * The negative cache of keys that are not active (unknown or revoked): bounded, and short
 * lived. A key only becomes active by `create`, which draws 32 random bytes and hands the
 * plaintext out after the insert committed, so no one can present a key before it exists:
 * a cached miss never shadows a new key. `create` still evicts its hash in this process,
 * and another process forgets a miss after UNKNOWN_KEY_TTL_MS at the latest.
 */
const UNKNOWN_KEYS_MAX = 10_000;
export const UNKNOWN_KEY_TTL_MS = 60_000;

/**
 * The positive cache of active keys, with their tenant's rate limit
 * (docs/decisions/0028-api-key-cache.md): kept only by a store built with `cacheActiveKeys` (the
 * API's), and only while the process is told of changes (`watchingChanges`, set by the API's LISTEN
 * connection on API_KEY_CHANGES_CHANNEL). `revoke` and TenantsStore.setRateLimit notify that
 * channel on commit, and every listening process drops all its cached keys when notified, so a
 * revocation or a new limit applies from the next request in practice (the notification arrives
 * within milliseconds of the commit); this process's own `revoke` drops them before it returns.
 * ACTIVE_KEY_TTL_MS bounds a key's life in the cache whatever happens to the notifications: a
 * revoked key is refused within 2 s at worst.
 */
const ACTIVE_KEYS_MAX = 10_000;
export const ACTIVE_KEY_TTL_MS = 2_000;

export class ApiKeysStore {
  /** When this process last recorded each key's use: at most one UPDATE a minute per key. */
  private readonly touched = new Map<string, number>();
  /** Hashes of keys found not active: answered without a query (see UNKNOWN_KEY_TTL_MS). */
  private readonly unknown = new LRUCache<string, true>({
    max: UNKNOWN_KEYS_MAX,
    ttl: UNKNOWN_KEY_TTL_MS,
  });

  /** Hashes of keys found active, with what the lookup read (see ACTIVE_KEY_TTL_MS). */
  private readonly active = new LRUCache<string, ActiveApiKey>({
    max: ACTIVE_KEYS_MAX,
    ttl: ACTIVE_KEY_TTL_MS,
  });
  /**
   * Key lookups of concurrent requests, coalesced (lookUpBatch): under load one statement
   * answers many requests; an idle process still sends each at the end of its event-loop
   * turn. A failed statement (an outage) fails every lookup of its batch.
   */
  private readonly lookups = new Batcher<string, KeyWithLimitRow | undefined>(
    (hashes) => this.lookUpBatch(hashes),
    oneBatchInFlight(200),
  );
  private watching = false;
  /** Counts the drops: a lookup that a drop overtook does not cache what it read. */
  private generation = 0;

  constructor(
    private readonly db: Knex,
    private readonly options: { cacheActiveKeys?: boolean } = {},
  ) {}

  /**
   * Whether this process hears of revocations and limit changes now (its LISTEN connection
   * is up). Active keys are cached only meanwhile; a change of state drops them all.
   */
  get watchingChanges(): boolean {
    return this.watching;
  }

  set watchingChanges(watching: boolean) {
    this.watching = watching;
    this.forgetActiveKeys();
  }

  /** Drops every cached active key (a notification on API_KEY_CHANGES_CHANNEL). */
  forgetActiveKeys(): void {
    this.generation += 1;
    this.active.clear();
  }

  /** Creates a key; the plaintext is returned here and never again. */
  async create(input: {
    tenantId: string;
    scopes: Scope[];
    name?: string;
    /** false: a test-mode key (default: live). */
    livemode?: boolean;
  }): Promise<{ apiKey: ApiKey; key: string }> {
    const livemode = input.livemode ?? true;
    const key = generateKey(livemode);
    const [row] = await this.db<ApiKeyRow>(TABLE)
      .insert({
        id: newId('key'),
        tenant_id: input.tenantId,
        name: input.name ?? '',
        key_hash: hashApiKey(key),
        display_prefix: key.slice(0, 12),
        scopes: input.scopes,
        livemode,
      })
      .returning('*');
    this.unknown.delete(hashApiKey(key));
    return { apiKey: toApiKey(row as ApiKeyRow), key };
  }

  /**
   * The active (not revoked) key with this plaintext. A miss is cached (UNKNOWN_KEY_TTL_MS);
   * so is a hit, by the API's store while it hears of changes (ACTIVE_KEY_TTL_MS).
   * It runs on every authenticated request, so the lookups of concurrent requests share one
   * prepared statement (lookUpBatch), which reads the tenant's rate limit in the same round
   * trip (a primary-key join), so limiting a key costs Postgres nothing more.
   */
  findActiveByKey(key: string): Promise<ActiveApiKey | undefined> {
    return this.findActiveByHash(hashApiKey(key));
  }

  /** findActiveByKey for a caller that hashed the key already (`hashApiKey`). */
  async findActiveByHash(hash: string): Promise<ActiveApiKey | undefined> {
    const cached = this.active.get(hash);
    if (cached) return cached;
    if (this.unknown.has(hash)) return undefined;
    const caching = this.options.cacheActiveKeys === true && this.watching;
    const generation = this.generation;
    const row = await this.lookups.add(hash);
    if (!row) {
      this.unknown.set(hash, true);
      return undefined;
    }
    const found = {
      ...toApiKey(row),
      rateLimit: rateLimitOf(row.rate_limit_per_second, row.rate_limit_burst),
    };
    // Not when told of a change while the lookup ran: it may have read the old row.
    if (caching && this.watching && this.generation === generation) this.active.set(hash, found);
    return found;
  }

  /**
   * One statement for the keys of every request waiting for a lookup (a batch of hashes,
   * duplicates read once). Invariant: a batch starts after each of its lookups was asked
   * for (the Batcher takes its queue when it starts), so its snapshot follows every request
   * in it, and a revocation committed before a request arrived is seen by that request's
   * lookup: the contract's "refused from the next request on" holds with no cache.
   */
  private async lookUpBatch(hashes: string[]): Promise<(KeyWithLimitRow | undefined)[]> {
    const rows = await runPrepared<KeyWithLimitRow>(
      this.db,
      'sb_api_keys_with_limit_by_hashes',
      `SELECT k.id, k.tenant_id, k.name, k.key_hash, k.display_prefix, k.scopes, k.livemode, k.created_at,
              k.last_used_at, k.revoked_at, t.rate_limit_per_second, t.rate_limit_burst
         FROM ${TABLE} k JOIN tenants t ON t.id = k.tenant_id
        WHERE k.key_hash = ANY ($1::text[]) AND k.revoked_at IS NULL`,
      [[...new Set(hashes)]],
    );
    const byHash = new Map(rows.map((r) => [r.key_hash, r]));
    return hashes.map((h) => byHash.get(h));
  }

  /** Records use at most once a minute per key so authentication stays one read. */
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

  /** A tenant's keys, revoked ones included, oldest first (operator tooling; no plaintext). */
  async listForTenant(tenantId: string): Promise<ApiKey[]> {
    const rows = await this.db<ApiKeyRow>(TABLE)
      .where({ tenant_id: tenantId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }]);
    return rows.map(toApiKey);
  }

  /**
   * Revokes a key and ends every portal session it created, in one transaction; returns
   * undefined when no such key exists, else the key and how many live sessions this ended.
   * Revoking twice is harmless (the second ends none, or any made during the first).
   * The revocation notifies API_KEY_CHANGES_CHANNEL on commit (every API process drops its
   * cached keys), and this process's cache is dropped before this returns.
   */
  async revoke(id: string): Promise<{ apiKey: ApiKey; portalSessionsEnded: number } | undefined> {
    const portalSessionsEnded = await this.db.transaction(async (trx) => {
      const revoked = await trx(TABLE)
        .where({ id })
        .whereNull('revoked_at')
        .update({ revoked_at: this.db.fn.now() });
      if (revoked > 0) await trx.raw(`SELECT ${NOTIFY_API_KEY_CHANGE_SQL}`, [id]);
      return endPortalSessionsOfKey(trx, id);
    });
    this.forgetActiveKeys();
    const row = await this.db<ApiKeyRow>(TABLE).where({ id }).first();
    return row && { apiKey: toApiKey(row), portalSessionsEnded };
  }
}
