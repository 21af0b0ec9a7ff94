import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';

// Request validation of POST /api/v1/webhooks (docs/API.md, Basics and Webhooks). Private
// targets are allowed in this file, so only the syntax and limits are under test here.
let ctx: TestContext;
let auth: string;
let tenantId: string;
beforeAll(async () => {
  ctx = await createTestContext();
  ({ auth, tenantId } = await ctx.tenant(['admin']));
});
afterAll(() => ctx.close());

const URL_OK = 'https://127.0.0.1:9/hook';
const post = () => request(ctx.app).post('/api/v1/webhooks').set('Authorization', auth);
const count = async () =>
  Number(
    (await ctx.deps.knex('webhook_subscriptions').where({ tenant_id: tenantId }).count('*'))[0]
      ?.count,
  );
const events = (n: number) => Array.from({ length: n }, (_, i) => `custom.event_${i}`);

describe('invalid bodies → 400 invalid_parameter naming the field, nothing stored', () => {
  it.each([
    ['missing url', {}, 'url'],
    ['url not a string', { url: 42 }, 'url'],
    ['url null', { url: null }, 'url'],
    ['http://', { url: 'http://127.0.0.1/hook' }, 'url'],
    ['ftp://', { url: 'ftp://127.0.0.1/hook' }, 'url'],
    ['user-info', { url: 'https://user:pass@127.0.0.1/hook' }, 'url'],
    ['user name only', { url: 'https://user@127.0.0.1/hook' }, 'url'],
    ['not a URL', { url: 'not a url' }, 'url'],
    ['relative URL', { url: '/hook' }, 'url'],
    ['empty url', { url: '' }, 'url'],
    ['url over 2048 chars', { url: `https://127.0.0.1/${'a'.repeat(2048)}` }, 'url'],
    ['events not an array', { url: URL_OK, events: 'call.started' }, 'events'],
    ['over 100 events', { url: URL_OK, events: events(101) }, 'events'],
    ['event not a string', { url: URL_OK, events: [1] }, 'events.0'],
    ['event without a dot', { url: URL_OK, events: ['call'] }, 'events.0'],
    ['event in capitals', { url: URL_OK, events: ['call.started', 'Call.Started'] }, 'events.1'],
    ['event with a dash', { url: URL_OK, events: ['call-started.x'] }, 'events.0'],
    ['event with trailing dot', { url: URL_OK, events: ['call.'] }, 'events.0'],
    ['event with double dot', { url: URL_OK, events: ['call..started'] }, 'events.0'],
    ['event starting with a digit', { url: URL_OK, events: ['1call.started'] }, 'events.0'],
    ['event with a space', { url: URL_OK, events: ['call.started '] }, 'events.0'],
    ['wildcard event', { url: URL_OK, events: ['call.*'] }, 'events.0'],
    ['description over 500', { url: URL_OK, description: 'd'.repeat(501) }, 'description'],
    ['description not a string', { url: URL_OK, description: 5 }, 'description'],
    ['unknown field', { url: URL_OK, secret: 'whsec_mine' }, 'secret'],
    ['unknown field is_active', { url: URL_OK, is_active: false }, 'is_active'],
  ])('%s', async (_name, body, param) => {
    const before = await count();
    const res = await post().send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_parameter',
      param,
    });
    expect(res.body.error.message).toEqual(expect.any(String));
    expect(await count()).toBe(before);
  });

  it('explains a rejected URL clearly', async () => {
    const http = await post().send({ url: 'http://127.0.0.1/hook' });
    expect(http.body.error.message).toBe('url must use https');
    const creds = await post().send({ url: 'https://u:p@127.0.0.1/hook' });
    expect(creds.body.error.message).toBe('url must not contain user-info');
    const unknown = await post().send({ url: URL_OK, colour: 'red' });
    expect(unknown.body.error.message).toBe('colour is not a known field');
  });

  it('a JSON array or scalar body is refused', async () => {
    // The strict JSON parser refuses top-level scalars; an array reaches the schema.
    for (const [body, code] of [
      ['[]', 'invalid_parameter'],
      ['"https://127.0.0.1/"', 'invalid_json'],
      ['null', 'invalid_json'],
    ]) {
      const res = await post().set('Content-Type', 'application/json').send(body);
      expect([body, res.status, res.body.error.code]).toEqual([body, 400, code]);
    }
  });
});

describe('accepted bodies', () => {
  it.each([
    ['events omitted = all', { url: URL_OK }, []],
    ['empty events = all', { url: URL_OK, events: [] }, []],
    [
      'unknown event names',
      { url: URL_OK, events: ['future_thing.happened_v2', 'a.b.c'] },
      ['future_thing.happened_v2', 'a.b.c'],
    ],
    ['exactly 100 events', { url: URL_OK, events: events(100) }, events(100)],
    [
      'duplicate events, kept once',
      { url: URL_OK, events: ['sms.sent', 'sms.sent'] },
      ['sms.sent'],
    ],
  ])('%s', async (_name, body, expected) => {
    const res = await post().send(body);
    expect(res.status).toBe(201);
    expect(res.body.events).toEqual(expected);
  });

  it('a url of exactly 2048 characters and a description of 500', async () => {
    const base = 'https://127.0.0.1/';
    const url = base + 'a'.repeat(2048 - base.length);
    const res = await post().send({ url, description: 'd'.repeat(500) });
    expect(res.status).toBe(201);
    expect(res.body.url).toBe(url);
    expect(res.body.description).toHaveLength(500);
  });

  it('a null description', async () => {
    const res = await post().send({ url: URL_OK, description: null });
    expect(res.status).toBe(201);
    expect(res.body.description).toBeNull();
  });

  it('IPv6 loopback and a port, with private targets allowed in this environment', async () => {
    const res = await post().send({ url: 'https://[::1]:8443/hooks?x=1' });
    expect(res.status).toBe(201);
  });
});

describe('body handling', () => {
  it('a body over 1 MiB → 413 payload_too_large', async () => {
    const body = JSON.stringify({ url: URL_OK, description: 'x'.repeat(1024 * 1024) });
    const res = await post().set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'payload_too_large',
    });
  });

  it('malformed JSON → 400 invalid_json', async () => {
    const res = await post().set('Content-Type', 'application/json').send('{"url": "https://');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('a text/plain body → 415 unsupported_media_type', async () => {
    const res = await post().set('Content-Type', 'text/plain').send(`{"url": "${URL_OK}"}`);
    expect(res.status).toBe(415);
    expect(res.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'unsupported_media_type',
    });
  });

  it('no body at all → 400 naming url', async () => {
    const res = await post();
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'url' });
  });
});
