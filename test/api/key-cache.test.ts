import request from 'supertest';
import {
  ACTIVE_KEY_TTL_MS,
  ApiKeysStore,
  createKnex,
  TenantsStore,
  watchApiKeyChanges,
} from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/wait';

// With API_KEY_CACHE_ENABLED, the API caches active keys for ACTIVE_KEY_TTL_MS while it
// LISTENs for revocations and limit changes (docs/decisions/0028-api-key-cache.md): a revocation by
// another process (the operator CLI) is refused from the next request in practice, within
// the TTL at worst; this process's own revocation drops the cache before it returns. Off (the
// default), a revoked key is refused from the very next request.
let ctx: TestContext;
let uncached: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ API_KEY_CACHE_ENABLED: 'true' });
  uncached = await createTestContext();
  await waitFor('the API to LISTEN for key changes', () => ctx.deps.stores.apiKeys.watchingChanges);
});
afterAll(async () => {
  await Promise.all([ctx?.close(), uncached?.close()]);
});

const list = (auth: string) =>
  request(ctx.app).get('/api/v1/receptionists').set('Authorization', auth);

/** A revocation written behind every cache's back: no notification, as if it were lost. */
const revokeSilently = (id: string) =>
  ctx.deps.knex('api_keys').where({ id }).update({ revoked_at: ctx.deps.knex.fn.now() });

it('an active key is served from the cache, and a silent revocation still ends within the TTL', async () => {
  const { tenantId } = await ctx.tenant();
  const key = await ctx.keyFor(tenantId, ['read']);
  const cachedAt = Date.now();
  expect((await list(key.auth)).status).toBe(200);
  await revokeSilently(key.id);
  // Cached: the next request does not read the row (while the entry is within its TTL: on a
  // machine slow enough to answer later than that, there is nothing to check here).
  const cached = await list(key.auth);
  if (Date.now() - cachedAt < ACTIVE_KEY_TTL_MS) expect(cached.status).toBe(200);
  // Without any notification, the key is refused once its cache entry is older than the TTL.
  const refused = await waitFor(
    'the silently revoked key to be refused',
    async () => {
      const res = await list(key.auth);
      return res.status === 401 ? res : undefined;
    },
    { timeoutMs: ACTIVE_KEY_TTL_MS + 10_000 },
  );
  expect(refused.body.error).toMatchObject({ code: 'invalid_api_key' });
});

it('a key revoked by another process is refused once the notification arrives', async () => {
  const { tenantId } = await ctx.tenant();
  const key = await ctx.keyFor(tenantId, ['read']);
  expect((await list(key.auth)).status).toBe(200);
  // Another process's store (the operator CLI's): it shares no memory with the API.
  const cli = new ApiKeysStore(ctx.deps.knex);
  await cli.revoke(key.id);
  const refused = await waitFor('the key revoked elsewhere to be refused', async () => {
    const res = await list(key.auth);
    return res.status === 401 ? res : undefined;
  });
  expect(refused.body.error).toMatchObject({ code: 'invalid_api_key' });
  // Refused for good, and the refusal does not come from a stale entry.
  expect((await list(key.auth)).status).toBe(401);
});

it("a tenant's new limit set by another process applies once the notification arrives", async () => {
  const { auth, tenantId } = await ctx.tenant(['read']);
  expect((await list(auth)).headers['ratelimit-policy']).toBe('"api-key";q=200;w=2');
  await new TenantsStore(ctx.deps.knex).setRateLimit(tenantId, { perSecond: 5, burst: 50 });
  await waitFor('the new limit to apply', async () => {
    const res = await list(auth);
    return res.headers['ratelimit-policy'] === '"api-key";q=50;w=10' ? res : undefined;
  });
});

describe('the store', () => {
  it("this process's revoke drops its cache before it returns", async () => {
    const { tenantId, key } = await ctx.tenant(['read']);
    const store = new ApiKeysStore(ctx.deps.knex, { cacheActiveKeys: true });
    store.watchingChanges = true;
    const found = await store.findActiveByKey(key);
    expect(found?.tenantId).toBe(tenantId);
    await revokeSilently(found?.id as string);
    // Served from the cache: the row says revoked already.
    expect((await store.findActiveByKey(key))?.id).toBe(found?.id);
    await store.revoke(found?.id as string);
    expect(await store.findActiveByKey(key)).toBeUndefined();
  });

  it('caches no active key unless it is told of changes, nor unless built to', async () => {
    for (const store of [
      new ApiKeysStore(ctx.deps.knex, { cacheActiveKeys: true }), // not watching
      Object.assign(new ApiKeysStore(ctx.deps.knex), { watchingChanges: true }),
    ]) {
      const { key } = await ctx.tenant(['read']);
      const found = await store.findActiveByKey(key);
      expect(found).toBeDefined();
      await revokeSilently(found?.id as string);
      expect(await store.findActiveByKey(key)).toBeUndefined();
    }
  });

  it('a lost connection stops the caching and drops what was cached', async () => {
    const { key } = await ctx.tenant(['read']);
    const store = new ApiKeysStore(ctx.deps.knex, { cacheActiveKeys: true });
    store.watchingChanges = true;
    const found = await store.findActiveByKey(key);
    await revokeSilently(found?.id as string);
    store.watchingChanges = false;
    expect(await store.findActiveByKey(key)).toBeUndefined();
  });
});

it('revoke and setRateLimit notify every listener on commit, and only on a change', async () => {
  let notified = 0;
  const target = { watchingChanges: false, forgetActiveKeys: () => (notified += 1) };
  const watcher = watchApiKeyChanges(ctx.config.databaseUrl, target, () => undefined);
  try {
    await waitFor('the listener to connect', () => target.watchingChanges);
    const { tenantId } = await ctx.tenant(['read']);
    const key = await ctx.keyFor(tenantId, ['read']);
    await new ApiKeysStore(ctx.deps.knex).revoke(key.id);
    await waitFor('the revocation to be heard', () => notified === 1);
    await new TenantsStore(ctx.deps.knex).setRateLimit(tenantId, { perSecond: 1, burst: 2 });
    await waitFor('the new limit to be heard', () => notified === 2);
    // Revoking again changes nothing and says nothing; a third change is heard after it, so
    // had the second revocation notified, it would have been heard first.
    await new ApiKeysStore(ctx.deps.knex).revoke(key.id);
    await new TenantsStore(ctx.deps.knex).setRateLimit(tenantId, null);
    await waitFor('the third change to be heard', () => notified >= 3);
    expect(notified).toBe(3);
  } finally {
    await watcher.close();
  }
  expect(target.watchingChanges).toBe(false);
});

it('a LISTEN connection cut by Postgres stops the cache until it is back', async () => {
  const keys = ctx.deps.stores.apiKeys;
  expect(keys.watchingChanges).toBe(true);
  const { rows } = (await ctx.deps.knex.raw(
    `SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity
      WHERE datname = current_database() AND query = ?`,
    ['LISTEN switchboard_api_key_changes'],
  )) as { rows: { cut: boolean }[] };
  expect(rows).toEqual([{ cut: true }]);
  await waitFor('the cache to stop', () => !keys.watchingChanges);
  // Meanwhile every request reads its key: a silent revocation is refused at once.
  const { tenantId } = await ctx.tenant();
  const key = await ctx.keyFor(tenantId, ['read']);
  expect((await list(key.auth)).status).toBe(200);
  await revokeSilently(key.id);
  if (!keys.watchingChanges) expect((await list(key.auth)).status).toBe(401);
  await waitFor('the LISTEN connection to be back', () => keys.watchingChanges);
});

it('by default no key is cached: a silent revocation is refused from the very next request', async () => {
  expect(uncached.deps.stores.apiKeys.watchingChanges).toBe(false);
  const { tenantId } = await uncached.tenant();
  const key = await uncached.keyFor(tenantId, ['read']);
  const get = () =>
    request(uncached.app).get('/api/v1/receptionists').set('Authorization', key.auth);
  expect((await get()).status).toBe(200);
  await uncached.deps.knex('api_keys').where({ id: key.id }).update({ revoked_at: new Date() });
  expect((await get()).status).toBe(401);
});

describe('key lookups of concurrent requests (no cache)', () => {
  /** A store of its own on its own pool, whose statements are counted (one acquire each). */
  const countedStore = () => {
    const knex = createKnex(uncached.config.databaseUrl);
    const client = (knex as unknown as { client: { acquireConnection(): Promise<unknown> } })
      .client;
    const acquire = client.acquireConnection.bind(client);
    const counter = { statements: 0 };
    client.acquireConnection = () => {
      counter.statements += 1;
      return acquire();
    };
    return { store: new ApiKeysStore(knex), counter, close: () => knex.destroy() };
  };

  it('share one statement, each request getting its own key (or none)', async () => {
    const a = await uncached.tenant(['read']);
    const b = await uncached.tenant(['write']);
    const revoked = await uncached.keyFor(a.tenantId, ['read']);
    await uncached.deps.stores.apiKeys.revoke(revoked.id);
    const { store, counter, close } = countedStore();
    try {
      const asked = [a.key, b.key, a.key, revoked.auth.slice('Bearer '.length), 'sk_live_x', b.key];
      const found = await Promise.all(asked.map((k) => store.findActiveByKey(k)));
      expect(found.map((k) => k?.tenantId ?? null)).toEqual([
        a.tenantId,
        b.tenantId,
        a.tenantId,
        null,
        null,
        b.tenantId,
      ]);
      expect(found[1]?.scopes).toEqual(['write']);
      expect(counter.statements).toBe(1);
    } finally {
      await close();
    }
  });

  it('a lookup asked while a statement runs is answered by a later statement', async () => {
    const { key, tenantId } = await uncached.tenant(['read']);
    const { store, counter, close } = countedStore();
    try {
      const first = store.findActiveByKey(key);
      await waitFor('the first statement to start', () => counter.statements === 1);
      const second = store.findActiveByKey(key);
      const found = await Promise.all([first, second]);
      expect(found.map((k) => k?.tenantId)).toEqual([tenantId, tenantId]);
      expect(counter.statements).toBe(2);
    } finally {
      await close();
    }
  });
});
