import request from 'supertest';
import { idempotencyRedisKey } from '../../apps/api/src/idempotency';
import type { TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { leadEvents } from '../support/leads';
import { subscriber, waitFor } from '../support/worker';

// Leads over REST (docs/API.md, Leads): create, read, update, with lead.created and
// lead.updated delivered signed to a real HTTPS receiver by the real worker.
let ctx: TestContext;
let world: WebhookWorld;
let receiver: TestReceiver;
let auth: string;
let tenantId: string;
let receptionistId: string;
let secret: string;
const PATH = '/leads-hook';

beforeAll(async () => {
  world = await startWebhookWorld({ [PATH]: (_req, res) => void res.writeHead(200).end() });
  ({ receiver, ctx } = world);
  const sub = await subscriber(ctx, `${world.base}${PATH}`, ['lead.created', 'lead.updated']);
  ({ auth, tenantId } = sub.tenant);
  receptionistId = sub.receptionistId;
  secret = sub.subscription.signing_secret;
});
afterAll(() => world?.close());

const post = (body: object, as = auth) =>
  request(ctx.app).post('/api/v1/leads').set('Authorization', as).send(body);
const patch = (id: string, body: object) =>
  request(ctx.app).patch(`/api/v1/leads/${id}`).set('Authorization', auth).send(body);
const events = () => leadEvents(receiver.requests, PATH, secret);

describe('leads', () => {
  it('creates a lead (201, Location, defaults) and delivers a signed lead.created', async () => {
    const res = await post({
      name: 'Dana Whitfield',
      phone: '+14155550123',
      email: 'dana@example.com',
      tags: ['boiler', 'spring', 'boiler'],
      metadata: { crm_id: 'c-42' },
      receptionist_id: receptionistId,
    });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/api/v1/leads/${res.body.id}`);
    expect(res.body).toMatchObject({
      name: 'Dana Whitfield',
      phone: '+14155550123',
      email: 'dana@example.com',
      source: 'api',
      status: 'new',
      notes: null,
      tags: ['boiler', 'spring'],
      metadata: { crm_id: 'c-42' },
      receptionist_id: receptionistId,
    });
    expect(res.body.id).toMatch(/^lead_[0-9a-f]{32}$/);
    const got = await request(ctx.app)
      .get(`/api/v1/leads/${res.body.id}`)
      .set('Authorization', auth);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);

    const [created] = await waitFor('lead.created delivered', () => {
      const e = events().filter((x) => x.data.lead_id === res.body.id);
      return e.length > 0 && e;
    });
    expect(created).toMatchObject({
      event: 'lead.created',
      receptionist_id: receptionistId,
      data: {
        lead_id: res.body.id,
        name: 'Dana Whitfield',
        phone: '+14155550123',
        email: 'dana@example.com',
        source: 'api',
        status: 'new',
        created_at: res.body.created_at,
      },
    });
  });

  it('a lead without receptionist has an envelope without receptionist_id', async () => {
    const res = await post({ email: 'only.email@example.com' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ phone: null, email: 'only.email@example.com' });
    const [created] = await waitFor('lead.created delivered', () => {
      const e = events().filter((x) => x.data.lead_id === res.body.id);
      return e.length > 0 && e;
    });
    expect(created).not.toHaveProperty('receptionist_id');
  });

  it('PATCH emits lead.updated with the changed fields; a no-op PATCH emits nothing', async () => {
    const lead = (await post({ name: 'Sam Ortiz', phone: '+14155550124' })).body;
    const noop = await patch(lead.id, { name: 'Sam Ortiz', tags: [] });
    expect(noop.status).toBe(200);
    expect(noop.body.updated_at).toBe(lead.updated_at);
    const changed = await patch(lead.id, {
      name: 'Sam Ortiz',
      status: 'contacted',
      notes: 'Call back Tuesday',
      metadata: {},
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ status: 'contacted', notes: 'Call back Tuesday' });
    // A later change to another field: the event after it proves nothing came in between.
    const third = await patch(lead.id, { email: 'sam@example.com' });
    expect(third.status).toBe(200);
    const updates = await waitFor('two lead.updated delivered', () => {
      const e = events().filter((x) => x.data.lead_id === lead.id && x.event === 'lead.updated');
      return e.length >= 2 && e;
    });
    const byFields = updates.map((u) => u.data.changed_fields).sort();
    expect(byFields).toEqual([['email'], ['status', 'notes']].sort());
    const stored = await ctx.deps.stores.events.listForTenant(tenantId, 'lead.updated');
    expect(stored.filter((e) => e.data.lead_id === lead.id)).toHaveLength(2);
    const update = updates.find((u) => u.data.changed_fields?.includes('status'));
    expect(update?.data).toMatchObject({
      status: 'contacted',
      updated_at: changed.body.updated_at,
    });
  });

  it('one lead per phone: 409 lead_exists names the existing lead, on POST and PATCH', async () => {
    const first = (await post({ phone: '+14155550125' })).body;
    const dup = await post({ phone: '+14155550125', name: 'Someone else' });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ type: 'invalid_request_error', code: 'lead_exists' });
    expect(dup.body.error.message).toContain(first.id);
    const other = (await post({ phone: '+14155550126' })).body;
    const clash = await patch(other.id, { phone: '+14155550125' });
    expect(clash.status).toBe(409);
    expect(clash.body.error.message).toContain(first.id);
    // Another tenant may have a lead with the same phone.
    const stranger = await ctx.tenant(['write']);
    expect((await post({ phone: '+14155550125' }, stranger.auth)).status).toBe(201);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: Array<[object, string]> = [
      [{}, 'phone'],
      [{ name: 'No contact' }, 'phone'],
      [{ phone: '4155550123' }, 'phone'],
      [{ phone: '+1415555' }, 'phone'],
      [{ email: 'not-an-email' }, 'email'],
      [{ phone: '+14155550127', status: 'hot' }, 'status'],
      [{ phone: '+14155550127', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags'],
      [{ phone: '+14155550127', name: 'a\u0000b' }, 'name'],
      [{ phone: '+14155550127', source: 'csv_import' }, 'source'],
      [{ phone: '+14155550127', metadata: { n: 1 } }, 'metadata.n'],
      [{ phone: '+14155550127', metadata: { ['k'.repeat(101)]: 'x' } }, 'metadata'],
      [JSON.parse('{"phone": "+14155550127", "metadata": {"__proto__": "x"}}'), 'metadata'],
      [{ phone: '+14155550127', metadata: { constructor: 'x' } }, 'metadata'],
    ];
    for (const [body, param] of cases) {
      const res = await post(body);
      expect([res.status, res.body.error?.code, res.body.error?.param]).toEqual([
        400,
        'invalid_parameter',
        param,
      ]);
    }
    const longKey = await post({ phone: '+14155550127', metadata: { ['k'.repeat(101)]: 'x' } });
    expect(longKey.body.error.message).toMatch(/metadata keys must be at most 100 characters/);
    const key100 = await post({ phone: '+14155550127', metadata: { ['k'.repeat(100)]: 'x' } });
    expect(key100.status).toBe(201);
    const lead = (await post({ phone: '+14155550128' })).body;
    expect((await patch(lead.id, {})).status).toBe(400);
    const clear = await patch(lead.id, { phone: null });
    expect([clear.status, clear.body.error.param]).toEqual([400, 'phone']);
  });

  it('another tenant’s lead or receptionist is a 404; a read key cannot write', async () => {
    const lead = (await post({ phone: '+14155550129' })).body;
    const other = await ctx.tenant(['admin']);
    const get = await request(ctx.app)
      .get(`/api/v1/leads/${lead.id}`)
      .set('Authorization', other.auth);
    expect(get.status).toBe(404);
    const foreign = await post(
      { phone: '+14155550130', receptionist_id: receptionistId },
      other.auth,
    );
    expect([foreign.status, foreign.body.error.param]).toEqual([404, 'receptionist_id']);
    const reader = await ctx.keyFor(tenantId, ['read']);
    const denied = await post({ phone: '+14155550131' }, reader.auth);
    expect([denied.status, denied.body.error.code]).toEqual([403, 'insufficient_scope']);
  });

  it('Idempotency-Key: a retry replays the lead; a new key for that phone is lead_exists', async () => {
    const body = { phone: '+14155550132', name: 'Kim Lee' };
    const first = await post(body).set('Idempotency-Key', 'lead-kim-1');
    expect(first.status).toBe(201);
    const again = await post(body).set('Idempotency-Key', 'lead-kim-1');
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    // Redis forgot it: Postgres still knows the key holds that lead (not a 409).
    await ctx.redis.del(idempotencyRedisKey(ctx.config.queuePrefix, tenantId, 'lead-kim-1'));
    const backstop = await post(body).set('Idempotency-Key', 'lead-kim-1');
    expect([backstop.status, backstop.body.id]).toEqual([201, first.body.id]);
    expect(backstop.headers['idempotent-replayed']).toBe('true');
    const reused = await post({ ...body, name: 'Other' }).set('Idempotency-Key', 'lead-kim-1');
    expect(reused.status).toBe(422);
    const newKey = await post(body).set('Idempotency-Key', 'lead-kim-2');
    expect(newKey.status).toBe(409);
    expect(newKey.body.error.message).toContain(first.body.id);
  });
});
