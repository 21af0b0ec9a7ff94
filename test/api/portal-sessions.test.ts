import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { CLI_BUNDLE, ROOT } from '../support/bundles';
import { createTestContext, type TestContext } from '../support/context';
import { testEnv } from '../support/env';
import { waitFor } from '../support/wait';

// A portal session ends with the API key that created it (docs/API.md, Tenant portal), and
// an admin lists and revokes the tenant's live sessions. The API runs with its key cache on
// (API_KEY_CACHE_ENABLED), the configuration where a revocation could be outlived longest.
let ctx: TestContext;
let owner: { tenantId: string; auth: string };
const api = () => request(ctx.app);

beforeAll(async () => {
  ctx = await createTestContext({ API_KEY_CACHE_ENABLED: 'true' });
  await waitFor('the API to LISTEN for key changes', () => ctx.deps.stores.apiKeys.watchingChanges);
  owner = await ctx.tenant(['admin']);
});
afterAll(() => ctx?.close());

/** A session made with the key `auth`: its id, its link's code and, once traded, its token. */
async function link(auth: string): Promise<{ id: string; code: string }> {
  const created = await api()
    .post('/api/v1/portal/sessions')
    .set('Authorization', auth)
    .send({})
    .expect(201);
  return { id: created.body.id, code: new URL(created.body.url).hash.replace('#code=', '') };
}

async function portal(auth: string): Promise<{ id: string; auth: string }> {
  const { id, code } = await link(auth);
  const traded = await api().post('/api/v1/portal/exchange').send({ code }).expect(200);
  return { id, auth: `Bearer ${traded.body.token}` };
}

const webhooks = (auth: string) => api().get('/api/v1/webhooks').set('Authorization', auth);
const listSessions = (auth: string, query = '') =>
  api().get(`/api/v1/portal/sessions${query}`).set('Authorization', auth);

/** The operator CLI, in its own process, on this file's database. */
function cli(...args: string[]) {
  const out = spawnSync(process.execPath, ['--enable-source-maps', CLI_BUNDLE, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...testEnv({ DATABASE_URL: ctx.config.databaseUrl }) },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('revoking the key that created a session', () => {
  it('`key revoke` ends its sessions: the token is refused on the very next request', async () => {
    const k2 = await ctx.keyFor(owner.tenantId, ['admin']);
    const used = await portal(k2.auth);
    const untraded = await link(k2.auth);
    const kept = await portal(owner.auth); // another key's session lives on
    expect((await webhooks(used.auth)).status).toBe(200);
    // K2 is in the API's key cache now: the case where a revocation could be outlived.
    expect((await webhooks(k2.auth)).status).toBe(200);

    const revoked = cli('key', 'revoke', '--id', k2.id);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: k2.id, portal_sessions_ended: 2 });

    const refused = await webhooks(used.auth);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_portal_token');
    const exchange = await api()
      .post('/api/v1/portal/exchange')
      .send({ code: untraded.code })
      .expect(401);
    expect(exchange.body.error.code).toBe('invalid_portal_code');
    expect((await webhooks(kept.auth)).status).toBe(200);
    // Revoking again ends nothing more.
    expect(JSON.parse(cli('key', 'revoke', '--id', k2.id).stdout).portal_sessions_ended).toBe(0);
  });

  it('a key revoked by any means ends its sessions, even one made after the revocation ran', async () => {
    const k3 = await ctx.keyFor(owner.tenantId, ['admin']);
    const session = await portal(k3.auth);
    expect((await webhooks(session.auth)).status).toBe(200);
    // Behind every store's back: the sessions are not marked, as for a session inserted by a
    // request that authenticated just before the revocation committed.
    await ctx.deps.knex('api_keys').where({ id: k3.id }).update({ revoked_at: new Date() });
    const refused = await webhooks(session.auth);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_portal_token');
    const listed = (await listSessions(owner.auth).expect(200)).body.data as Array<{ id: string }>;
    expect(listed.map((s) => s.id)).not.toContain(session.id);
  });
});

describe('GET /portal/sessions', () => {
  it('lists the live sessions, newest first, with their creator and last use; never a secret', async () => {
    const { auth } = await ctx.tenant(['admin']);
    const first = await portal(auth);
    const second = await link(auth);
    const gone = await portal(auth);
    const expired = await portal(auth);
    await api().delete(`/api/v1/portal/sessions/${gone.id}`).set('Authorization', auth).expect(204);
    await ctx.deps
      .knex('portal_sessions')
      .where({ id: expired.id })
      .update({ expires_at: ctx.deps.knex.raw("now() - interval '1 second'") });
    await portal(owner.auth); // another tenant's
    expect((await webhooks(first.auth)).status).toBe(200);
    const creator = (await ctx.deps.knex('portal_sessions').where({ id: first.id }).first())
      .created_by_key_id as string;
    expect(creator).toMatch(/^key_/);

    const listed = await waitFor('the first session’s use to be recorded', async () => {
      const res = await listSessions(auth).expect(200);
      return res.body.data[1]?.last_used_at ? res : undefined;
    });
    expect(listed.body).toEqual({
      data: [
        {
          id: second.id,
          created_by_key_id: creator,
          capabilities: ['view', 'manage_endpoints', 'recover'],
          subscription_ids: null,
          created_at: expect.any(String),
          expires_at: expect.any(String),
          last_used_at: null,
        },
        expect.objectContaining({ id: first.id, last_used_at: expect.any(String) }),
      ],
      has_more: false,
      cursor: null,
    });
    const page = await listSessions(auth, '?limit=1').expect(200);
    expect(page.body).toMatchObject({ data: [{ id: second.id }], has_more: true });
    const next = await listSessions(auth, `?limit=1&cursor=${page.body.cursor}`).expect(200);
    expect(next.body).toMatchObject({ data: [{ id: first.id }], has_more: false });
  });

  it('needs an admin key: a write key and a portal token get 403', async () => {
    const write = await ctx.keyFor(owner.tenantId, ['write']);
    const session = await portal(owner.auth);
    for (const auth of [write.auth, session.auth]) {
      for (const res of [
        await listSessions(auth),
        await api().delete('/api/v1/portal/sessions').set('Authorization', auth),
      ]) {
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('insufficient_scope');
      }
    }
    expect((await webhooks(session.auth)).status).toBe(200);
  });
});

describe('DELETE /portal/sessions', () => {
  it('revokes every live session of the tenant and says how many; other tenants keep theirs', async () => {
    const { tenantId, auth } = await ctx.tenant(['admin']);
    const other = await ctx.keyFor(tenantId, ['admin']);
    const sessions = [await portal(auth), await portal(other.auth)];
    const untraded = await link(auth);
    const foreign = await portal(owner.auth);
    // A query is refused, never read as a filter of what to revoke.
    const typo = await api()
      .delete(`/api/v1/portal/sessions?id=${untraded.id}`)
      .set('Authorization', auth)
      .expect(400);
    expect(typo.body.error).toMatchObject({ code: 'invalid_parameter', param: 'id' });
    expect((await webhooks(sessions[0]!.auth)).status).toBe(200);

    const res = await api().delete('/api/v1/portal/sessions').set('Authorization', auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked: 3 });
    for (const s of sessions) {
      const refused = await webhooks(s.auth);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('invalid_portal_token');
    }
    await api().post('/api/v1/portal/exchange').send({ code: untraded.code }).expect(401);
    expect((await listSessions(auth).expect(200)).body.data).toEqual([]);
    expect((await webhooks(foreign.auth)).status).toBe(200);
    // Again: nothing left to revoke.
    const again = await api().delete('/api/v1/portal/sessions').set('Authorization', auth);
    expect([again.status, again.body]).toEqual([200, { revoked: 0 }]);
  });
});
