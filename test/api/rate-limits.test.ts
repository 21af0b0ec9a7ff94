import { spawnSync } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { parseList } from 'structured-headers';
import type { RateLimit } from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { testEnv } from '../support/env';
import { messages, uid } from '../support/fixtures';
import { addReceptionist } from '../support/receptionist';

// Per-key rate limits (docs/API.md, Rate limits): a token bucket per API key in Redis, sized
// by the key's tenant (the operator CLI sets it) or the deployment's defaults; over it → 429
// rate_limited with Retry-After; every authenticated answer carries RateLimit-Policy and
// RateLimit; telephony ingestion is not limited.
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const ROOT = path.resolve(__dirname, '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function limitedTenant(limit: RateLimit | null) {
  const t = await ctx.tenant(['admin']);
  await ctx.deps.stores.tenants.setRateLimit(t.tenantId, limit);
  return t;
}
const list = (auth: string) =>
  request(ctx.app).get('/api/v1/receptionists').set('Authorization', auth);

/** The one member of a RateLimit or RateLimit-Policy field: its name and parameters. */
function field(res: request.Response, name: string): { name: string; params: object } {
  const raw = res.headers[name.toLowerCase()];
  expect([name, typeof raw]).toEqual([name, 'string']);
  const members = parseList(raw as string);
  expect(members).toHaveLength(1);
  const [value, params] = members[0] as [unknown, Map<string, unknown>];
  return { name: String(value), params: Object.fromEntries(params) };
}

/** Requests until the first 429 (at most `max`): the successes and the 429. */
async function untilLimited(auth: string, max: number) {
  let ok = 0;
  for (let i = 0; i < max; i++) {
    const res = await list(auth);
    if (res.status === 429) return { ok, limited: res };
    expect(res.status).toBe(200);
    ok++;
  }
  throw new Error(`no 429 within ${max} requests`);
}

it('a key spends its burst, is refused with Retry-After, and refills at its rate', async () => {
  const { auth } = await limitedTenant({ perSecond: 5, burst: 10 });
  const started = Date.now();
  const first = await untilLimited(auth, 40);
  // A full bucket of 10, plus what refilled (5 a second) while the requests ran.
  expect(first.ok).toBeGreaterThanOrEqual(10);
  expect(first.ok).toBeLessThanOrEqual(10 + Math.floor((5 * (Date.now() - started)) / 1000) + 1);

  const res = first.limited;
  expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
  expect(res.body.error.message).toMatch(/at most 5 a second, in bursts of up to 10/);
  expect(res.headers['retry-after']).toBe('1'); // one token takes 200 ms
  expect(field(res, 'RateLimit')).toEqual({ name: 'api-key', params: { r: 0, t: 1 } });
  expect(field(res, 'RateLimit-Policy')).toEqual({ name: 'api-key', params: { q: 10, w: 2 } });

  // After a second, at least the 5 tokens of that second are there, and no more than the
  // rate allows for the whole time since the refusal.
  const refused = Date.now();
  await sleep(1000);
  const second = await untilLimited(auth, 40);
  expect(second.ok).toBeGreaterThanOrEqual(5);
  expect(second.ok).toBeLessThanOrEqual(Math.floor((5 * (Date.now() - refused)) / 1000) + 1);
});

it('each key has a bucket of its own, within a tenant and across tenants', async () => {
  const a = await limitedTenant({ perSecond: 1, burst: 2 });
  const b = await ctx.keyFor(a.tenantId, ['read']);
  const other = await limitedTenant({ perSecond: 1, burst: 2 });
  const spent = await untilLimited(a.auth, 10);
  expect(spent.ok).toBeGreaterThanOrEqual(2);
  expect(spent.ok).toBeLessThanOrEqual(4);
  expect((await list(b.auth)).status).toBe(200);
  expect((await list(other.auth)).status).toBe(200);
  // The buckets live in Redis under the deployment's hash-tagged prefix.
  const keys = await ctx.redis.keys(`${ctx.config.queuePrefix}:rl:api-key:*`);
  expect(keys.length).toBeGreaterThanOrEqual(3);
});

describe('the operator CLI sets a tenant its own limit', () => {
  const cli = (...args: string[]) => {
    const out = spawnSync(
      process.execPath,
      [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'apps/cli/src/main.ts', ...args],
      {
        cwd: ROOT,
        env: { ...process.env, ...testEnv({ DATABASE_URL: ctx.config.databaseUrl }) },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    return { code: out.status, stdout: out.stdout, stderr: out.stderr };
  };

  it('tenant limits --rate --burst applies from the next request; --default restores', async () => {
    const { tenantId, auth } = await ctx.tenant(['read']);
    expect(field(await list(auth), 'RateLimit-Policy').params).toEqual({ q: 200, w: 2 });

    const set = cli('tenant', 'limits', '--id', tenantId, '--rate', '1', '--burst', '3');
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      id: tenantId,
      rate_limit: { per_second: 1, burst: 3 },
    });
    // The bucket is the key's (one request spent above); at the new size 3 it holds 2 more.
    const spent = await untilLimited(auth, 10);
    expect(spent.ok).toBeGreaterThanOrEqual(2);
    expect(spent.ok).toBeLessThanOrEqual(4);
    expect(field(spent.limited, 'RateLimit-Policy').params).toEqual({ q: 3, w: 3 });

    const reset = cli('tenant', 'limits', '--id', tenantId, '--default');
    expect(reset.code).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ id: tenantId, rate_limit: null });
    // The tokens in use carry over to the larger bucket: it is not refused (as a bucket kept
    // as a refill time would be, for the 3 s the small one takes) and nearly full.
    const after = await list(auth);
    expect(after.status).toBe(200);
    expect(field(after, 'RateLimit-Policy').params).toEqual({ q: 200, w: 2 });
    const { r } = field(after, 'RateLimit').params as { r: number };
    expect(r).toBeGreaterThanOrEqual(190);
    expect(r).toBeLessThan(200);
  });

  it('refuses a burst below the rate, a missing value and an unknown tenant', () => {
    const below = cli('tenant', 'limits', '--id', 'ten_x', '--rate', '10', '--burst', '5');
    expect(below.code).toBe(2);
    expect(below.stderr).toMatch(/--burst must be at least --rate/);
    expect(cli('tenant', 'limits', '--id', 'ten_x', '--rate', '10').stderr).toMatch(
      /--burst is required/,
    );
    expect(cli('tenant', 'limits', '--id', 'ten_x', '--rate', '0', '--burst', '5').code).toBe(2);
    const unknown = cli('tenant', 'limits', '--id', 'ten_nope', '--rate', '1', '--burst', '1');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no tenant ten_nope/);
  });
});

it('every answer to a known key carries both fields, whatever its status', async () => {
  const { auth, tenantId } = await limitedTenant({ perSecond: 1, burst: 50 });
  const read = await ctx.keyFor(tenantId, ['read']);
  // When each request was sent and answered: the bucket refills with time, so how much may
  // come back between two answers depends on how far apart the machine served them.
  const sent: number[] = [];
  const answered: number[] = [];
  const timed = async (req: PromiseLike<request.Response>): Promise<request.Response> => {
    sent.push(Date.now());
    const res = await req;
    answered.push(Date.now());
    return res;
  };
  const answers = [
    await timed(list(auth)), // 200
    await timed(request(ctx.app).get('/api/v1/calls/call_missing').set('Authorization', auth)), // 404
    await timed(request(ctx.app).get('/api/v1/calls?limit=0').set('Authorization', auth)), // 400
    await timed(
      request(ctx.app)
        .post('/api/v1/webhooks')
        .set('Authorization', read.auth)
        .send({ url: 'https://example.com/hook' }),
    ), // 403
    await timed(
      request(ctx.app)
        .post('/api/v1/leads')
        .set('Authorization', auth)
        .set('Content-Type', 'text/plain')
        .send('x'),
    ), // 415
  ];
  expect(answers.map((r) => r.status)).toEqual([200, 404, 400, 403, 415]);
  const remaining: number[] = [];
  for (const res of answers) {
    expect(field(res, 'RateLimit-Policy')).toEqual({ name: 'api-key', params: { q: 50, w: 50 } });
    const limit = field(res, 'RateLimit');
    expect(limit.name).toBe('api-key');
    const { r, t } = limit.params as { r: number; t: number };
    expect(Number.isInteger(r) && Number.isInteger(t) && t >= 1).toBe(true);
    // The effective window is the time to refill what was spent: (50 - r) tokens at 1 a second.
    expect(t).toBe(50 - r);
    remaining.push(r);
  }
  // Each answer spent one token of its key (the read key has a bucket of its own); at one
  // token a second, at most as many came back between two answers as whole seconds began
  // between the first's request and the second's answer.
  const ownAt = [0, 1, 2, 4];
  const own = ownAt.map((i) => remaining[i] as number);
  expect(own[0]).toBe(49);
  for (let k = 1; k < own.length; k++) {
    const refilled = Math.ceil(
      ((answered[ownAt[k] as number] as number) - (sent[ownAt[k - 1] as number] as number)) / 1000,
    );
    expect(own[k]).toBeLessThanOrEqual((own[k - 1] as number) - 1 + refilled);
    expect(own[k]).toBeGreaterThanOrEqual((own[k - 1] as number) - 1);
  }
  expect(remaining[3]).toBe(49);

  // No key, no bucket: unauthenticated answers and the service routes carry neither field.
  const unauthenticated = [
    await request(ctx.app).get('/api/v1/receptionists').set('Authorization', 'Bearer sk_live_x0'),
    await request(ctx.app).get('/api/v1/receptionists'),
    await request(ctx.app).get('/healthz'),
    await request(ctx.app).get('/api/v1/openapi.json'),
  ];
  for (const res of unauthenticated) {
    expect(res.headers.ratelimit).toBeUndefined();
    expect(res.headers['ratelimit-policy']).toBeUndefined();
  }
});

it('telephony ingestion is not limited (its callers hold no API key)', async () => {
  const { tenantId } = await limitedTenant({ perSecond: 1, burst: 1 });
  const rcp = await addReceptionist(ctx, tenantId, { phoneNumber: '+14155550100' });
  for (let i = 0; i < 30; i++) {
    const res = await request(ctx.app)
      .post('/internal/v1/telephony/events')
      .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
      .send(messages.started(rcp, uid(), new Date().toISOString()));
    expect(res.status).toBe(202);
    expect(res.headers.ratelimit).toBeUndefined();
  }
});
