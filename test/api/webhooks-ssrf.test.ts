import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { fakeLookup } from '../support/webhooks';

// WEBHOOK_ALLOW_PRIVATE_TARGETS=false. Host names resolve through a fake resolver only, and
// no request in this file ever reaches the network: creation checks addresses without
// connecting, and every test delivery here is refused before a socket is opened.
const PUBLIC_V4 = '93.184.215.14';
let rebindCalls = 0;
const lookup = fakeLookup({
  'public.example.test': [PUBLIC_V4],
  'internal.example.test': ['10.1.2.3'],
  'metadata.example.test': ['169.254.169.254'],
  'ula.example.test': ['fd00::1'],
  'mapped.example.test': ['::ffff:127.0.0.1'],
  'mixed.example.test': [PUBLIC_V4, '127.0.0.1'],
  localhost: ['127.0.0.1', '::1'],
  // DNS rebinding: a public answer for the creation check, loopback afterwards.
  'rebind.example.test': () => (rebindCalls++ === 0 ? [PUBLIC_V4] : ['127.0.0.1']),
});

let ctx: TestContext;
let auth: string;
beforeAll(async () => {
  ctx = await createTestContext(
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' },
    { webhookLookup: lookup },
  );
  ({ auth } = await ctx.tenant(['admin']));
});
afterAll(() => ctx.close());

const create = (url: string) =>
  request(ctx.app).post('/api/v1/webhooks').set('Authorization', auth).send({ url });

const HOSTILE = [
  // IPv4 loopback in every spelling the URL parser accepts
  'https://127.0.0.1/hook',
  'https://127.1/hook',
  'https://127.0.1/hook',
  'https://2130706433/hook',
  'https://0x7f000001/hook',
  'https://0x7f.0.0.1/hook',
  'https://0177.0.0.1/hook',
  'https://017700000001/hook',
  'https://127.255.255.254:8443/hook',
  // unspecified, private, CGNAT, link-local and metadata
  'https://0/hook',
  'https://0.0.0.0/hook',
  'https://10.0.0.1/hook',
  'https://172.16.0.1/hook',
  'https://172.31.255.254/hook',
  'https://192.168.1.1/hook',
  'https://100.64.0.1/hook',
  'https://100.127.255.254/hook',
  'https://169.254.169.254/latest/meta-data/',
  'https://169.254.0.1/hook',
  // documentation, benchmarking, protocol assignments, multicast, reserved, broadcast
  'https://192.0.2.1/hook',
  'https://198.51.100.7/hook',
  'https://203.0.113.9/hook',
  'https://198.18.0.1/hook',
  'https://192.0.0.8/hook',
  'https://224.0.0.1/hook',
  'https://239.255.255.250/hook',
  'https://240.0.0.1/hook',
  'https://255.255.255.255/hook',
  // IPv6: loopback, unspecified, embedded IPv4 forms, ULA, link/site-local, multicast, docs
  'https://[::1]/hook',
  'https://[::]/hook',
  'https://[::ffff:127.0.0.1]/hook',
  'https://[::ffff:7f00:1]/hook',
  'https://[::ffff:10.0.0.1]/hook',
  'https://[::ffff:169.254.169.254]/hook',
  'https://[::127.0.0.1]/hook',
  'https://[64:ff9b::7f00:1]/hook',
  'https://[64:ff9b::a9fe:a9fe]/hook',
  'https://[2002:7f00:1::]/hook',
  'https://[2002:a00:1::1]/hook',
  'https://[fd00::1]/hook',
  'https://[fd00:ec2::254]/hook',
  'https://[fc00::1]/hook',
  'https://[fe80::1]/hook',
  'https://[fec0::1]/hook',
  'https://[ff02::1]/hook',
  'https://[2001:db8::1]/hook',
  // names resolving to non-public addresses (one bad answer among good ones is enough)
  'https://localhost/hook',
  'https://internal.example.test/hook',
  'https://metadata.example.test/hook',
  'https://ula.example.test/hook',
  'https://mapped.example.test/hook',
  'https://mixed.example.test/hook',
];

describe('creation refuses non-public targets', () => {
  it(`has a corpus of at least 40 hostile targets (${HOSTILE.length})`, () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(40);
  });

  it.each(HOSTILE)('%s → 400 invalid_parameter url', async (url) => {
    const res = await create(url);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'url' });
    expect(res.body.error.message).toMatch(/public address/);
  });

  it('an unresolvable name → 400 naming url, with the very message of a blocked one', async () => {
    // Two messages would tell a caller which internal names exist (an oracle); one does not.
    const unresolvable = await create('https://nowhere.example.test/hook');
    const blocked = await create('https://internal.example.test/hook');
    expect(unresolvable.status).toBe(400);
    expect(unresolvable.body.error).toMatchObject({ code: 'invalid_parameter', param: 'url' });
    expect(unresolvable.body.error.message).toBe(blocked.body.error.message);
    expect(unresolvable.body.error.message).not.toMatch(/nowhere|resolved/);
  });

  it('https is still required', async () => {
    const res = await create(`http://${PUBLIC_V4}/hook`);
    expect(res.body.error).toMatchObject({ param: 'url', message: 'url must use https' });
  });

  it('nothing was stored', async () => {
    expect(await ctx.deps.knex('webhook_subscriptions').count('*')).toEqual([{ count: '0' }]);
  });
});

describe('public targets are accepted (creation does not connect)', () => {
  it.each([
    `https://${PUBLIC_V4}/hook`,
    'https://public.example.test/hook',
    'https://[2606:4700:4700::1111]/hook',
  ])('%s → 201', async (url) => {
    const res = await create(url);
    expect(res.status).toBe(201);
  });
});

describe('the check runs again at every send', () => {
  it('a name that rebinds to loopback after creation is refused at test delivery', async () => {
    const created = await create('https://rebind.example.test/hook');
    expect(created.status).toBe(201);
    const res = await request(ctx.app)
      .post(`/api/v1/webhooks/${created.body.id}/test`)
      .set('Authorization', auth);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      subscription_id: created.body.id,
      delivered: false,
      status_code: null,
      error: 'blocked_address',
    });
    expect(rebindCalls).toBe(2);
  });

  it('a stored private URL (e.g. from before a policy change) is refused at send', async () => {
    const created = await create(`https://${PUBLIC_V4}/hook`);
    await ctx.deps
      .knex('webhook_subscriptions')
      .where({ id: created.body.id })
      .update({ url: 'https://[::ffff:169.254.169.254]/latest' });
    const res = await request(ctx.app)
      .post(`/api/v1/webhooks/${created.body.id}/test`)
      .set('Authorization', auth);
    expect(res.body).toMatchObject({
      delivered: false,
      status_code: null,
      error: 'blocked_address',
    });
  });
});
