import request from 'supertest';
import type { NewLead } from '@switchboard/db';
import { idempotencyRedisKey } from '../../apps/api/src/idempotency';
import { createTestContext, type TestContext } from '../support/context';
import { addReceptionist, receptionistTenant } from '../support/receptionist';

// POST/GET /api/v1/campaigns and cancel (docs/API.md, Campaigns), without a worker: the
// three recipient forms resolved at acceptance, bad input, ownership, readiness,
// Idempotency-Key, pagination and cancel's states.
const PATH = '/api/v1/campaigns';

let ctx: TestContext;
let auth: string;
let tenantId: string;
let rcp: string;
let notReady: string;
const leads: Record<string, string> = {};

beforeAll(async () => {
  ctx = await createTestContext();
  ({ auth, tenantId, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: '+14155550100',
  }));
  notReady = await addReceptionist(ctx, tenantId, { name: 'Later', status: 'provisioning' });
  const rows: Array<[string, NewLead['fields']]> = [
    ['dana', { name: 'Dana Whitfield', phone: '+14155550201', status: 'won', tags: ['boiler'] }],
    ['sam', { name: 'Sam', phone: '+14155550202', status: 'won', tags: ['boiler', 'vip'] }],
    ['noname', { phone: '+14155550203', status: 'won', tags: ['boiler'] }],
    ['mailonly', { name: 'Mail Only', email: 'm@example.com', status: 'won', tags: ['boiler'] }],
    ['newbie', { name: 'Newbie', phone: '+14155550204', status: 'new', tags: [] }],
  ];
  for (const [key, fields] of rows) {
    const lead = await ctx.deps.stores.leads.insert(ctx.deps.knex, {
      tenantId,
      source: 'api',
      fields,
    });
    leads[key] = lead?.id as string;
  }
});
afterAll(() => ctx.close());

const body = (extra: object = {}) => ({
  name: 'Spring boiler check',
  receptionist_id: rcp,
  message: 'Hi {{name}}, spring boiler checks are open. Reply STOP to opt out.',
  recipients: { lead_filter: { status: 'won' } },
  ...extra,
});
const post = (b: object, opts: { key?: string; as?: string } = {}) => {
  const req = request(ctx.app)
    .post(PATH)
    .set('Authorization', opts.as ?? auth);
  if (opts.key) req.set('Idempotency-Key', opts.key);
  return req.send(b);
};
const recipientsOf = async (campaignId: string) =>
  (await ctx.deps
    .knex('campaign_recipients')
    .where({ campaign_id: campaignId })
    .orderBy('seq')
    .select('seq', 'phone', 'name', 'lead_id', 'state')) as Array<{
    seq: number;
    phone: string;
    name: string | null;
    lead_id: string | null;
    state: string;
  }>;

describe('POST /campaigns', () => {
  it('accepts a lead filter: 202 queued, recipients resolved, leads without phone skipped', async () => {
    const res = await post(body());
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/api/v1/campaigns/${res.body.id}`);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^cmp_[0-9a-f]{32}$/),
      name: 'Spring boiler check',
      receptionist_id: rcp,
      message: 'Hi {{name}}, spring boiler checks are open. Reply STOP to opt out.',
      status: 'queued',
      recipients: 3,
      sent: 0,
      failed: 0,
      opted_out: 0,
      skipped: 0,
      delivered: 0,
      undelivered: 0,
      allow_repeat: false,
      send_rate_per_minute: 60,
      created_at: expect.any(String),
      started_at: null,
      completed_at: null,
      livemode: true,
    });
    const rows = await recipientsOf(res.body.id);
    expect(rows).toEqual([
      {
        seq: 1,
        phone: '+14155550201',
        name: 'Dana Whitfield',
        lead_id: leads.dana,
        state: 'pending',
      },
      { seq: 2, phone: '+14155550202', name: 'Sam', lead_id: leads.sam, state: 'pending' },
      { seq: 3, phone: '+14155550203', name: null, lead_id: leads.noname, state: 'pending' },
    ]);
    const job = await ctx.queues.campaigns.getJob(res.body.id);
    expect(job?.data).toEqual({ v: 1, campaignId: res.body.id });
    // Visible at once, with the same shape.
    const got = await request(ctx.app).get(`${PATH}/${res.body.id}`).set('Authorization', auth);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('filters by tag; lead ids in their order, repeats once; phones deduplicated', async () => {
    const byTag = await post(body({ recipients: { lead_filter: { tag: 'vip' } } }));
    expect(byTag.body.recipients).toBe(1);

    const byIds = await post(
      body({ recipients: { lead_ids: [leads.sam, leads.mailonly, leads.dana, leads.sam] } }),
    );
    expect(byIds.status).toBe(202);
    expect((await recipientsOf(byIds.body.id)).map((r) => r.lead_id)).toEqual([
      leads.sam,
      leads.dana,
    ]);

    const phones = ['+14155550299', '+14155550201', '+14155550299', '+442079460000'];
    const byPhones = await post(body({ recipients: { phones }, send_rate_per_minute: 600 }));
    expect(byPhones.status).toBe(202);
    expect(byPhones.body).toMatchObject({ recipients: 3, send_rate_per_minute: 600 });
    // A number that is a lead's phone takes that lead's name for {{name}}.
    expect(await recipientsOf(byPhones.body.id)).toEqual([
      { seq: 1, phone: '+14155550299', name: null, lead_id: null, state: 'pending' },
      {
        seq: 2,
        phone: '+14155550201',
        name: 'Dana Whitfield',
        lead_id: leads.dana,
        state: 'pending',
      },
      { seq: 3, phone: '+442079460000', name: null, lead_id: null, state: 'pending' },
    ]);
  });

  it('no recipients after filtering is a 400 no_recipients, and nothing is stored', async () => {
    const before = await ctx.deps.knex('campaigns').count({ n: '*' }).first();
    for (const recipients of [
      { lead_filter: { tag: 'nobody-has-this' } },
      { lead_ids: [leads.mailonly] },
      { lead_ids: [] },
      { phones: [] },
    ]) {
      const res = await post(body({ recipients }));
      expect([res.status, res.body.error]).toEqual([
        400,
        expect.objectContaining({ code: 'no_recipients', param: 'recipients' }),
      ]);
    }
    expect(await ctx.deps.knex('campaigns').count({ n: '*' }).first()).toEqual(before);
  });

  it('refuses two recipient forms, none, unknown ones and bad values (400)', async () => {
    const cases: Array<[object, string]> = [
      [{ recipients: { phones: ['+14155550201'], lead_ids: [leads.dana] } }, 'recipients'],
      [{ recipients: {} }, 'recipients'],
      [{ recipients: { emails: ['a@b.c'] } }, 'recipients.emails'],
      [{ recipients: { phones: ['0207 946 0000'] } }, 'recipients.phones.0'],
      [{ recipients: { lead_ids: ['rcp_nope'] } }, 'recipients.lead_ids.0'],
      [{ recipients: { lead_filter: { status: 'hot' } } }, 'recipients.lead_filter.status'],
      [{ recipients: { phones: Array(10_001).fill('+14155550201') } }, 'recipients.phones'],
      [{ send_rate_per_minute: 601 }, 'send_rate_per_minute'],
      [{ send_rate_per_minute: 0 }, 'send_rate_per_minute'],
      [{ message: '   ' }, 'message'],
      [{ message: 'x'.repeat(1601) }, 'message'],
      [{ name: '' }, 'name'],
      [{ receptionist_id: 'nope' }, 'receptionist_id'],
    ];
    for (const [extra, param] of cases) {
      const res = await post(body(extra));
      expect([extra, res.status, res.body.error?.code, res.body.error?.param]).toEqual([
        extra,
        400,
        'invalid_parameter',
        param,
      ]);
    }
  });

  it('refuses a message whose {{name}} render exceeds 1600 characters (longest name)', async () => {
    // "Dana Whitfield" (14 characters) is the longest name: 1586 + 14 = 1600 fits.
    const fits = `${'x'.repeat(1586)}{{name}}`;
    expect((await post(body({ message: fits }))).status).toBe(202);
    const tooLong = `${'x'.repeat(1584)}{{name}}{{name}}`;
    const res = await post(body({ message: tooLong }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'message' });
    expect(res.body.error.message).toMatch(/1612 characters/);
    // A message that is only {{name}} is empty for a recipient without a name.
    const blank = await post(body({ message: ' {{name}} ' }));
    expect(blank.body.error).toMatchObject({ code: 'invalid_parameter', param: 'message' });
  });

  it('more than 10,000 recipients from a filter is a 400 too_many_recipients', async () => {
    const { rcp: r, ...other } = await receptionistTenant(ctx, {
      scopes: ['write'],
      name: 'Big',
      phoneNumber: '+14155550111',
    });
    const many = Array.from({ length: 10_001 }, (_, i) => ({
      tenantId: other.tenantId,
      source: 'api' as const,
      fields: { phone: `+1415${String(2_000_000 + i)}`, tags: ['all'] },
    }));
    await ctx.deps.stores.leads.insertMany(ctx.deps.knex, many);
    const res = await post(body({ receptionist_id: r, recipients: { lead_filter: {} } }), {
      as: other.auth,
    });
    expect([res.status, res.body.error?.code]).toEqual([400, 'too_many_recipients']);
    // Exactly 10,000 is fine.
    await ctx.deps
      .knex('leads')
      .whereIn(
        'id',
        ctx.deps.knex('leads').select('id').where({ tenant_id: other.tenantId }).limit(1),
      )
      .delete();
    const ok = await post(body({ receptionist_id: r, recipients: { lead_filter: {} } }), {
      as: other.auth,
    });
    expect([ok.status, ok.body.recipients]).toEqual([202, 10_000]);
  }, 60_000);

  it("another tenant's lead or receptionist is a 404; a receptionist not ready a 409", async () => {
    const other = await ctx.tenant(['write']);
    const theirs = await ctx.deps.stores.leads.insert(ctx.deps.knex, {
      tenantId: other.tenantId,
      source: 'api',
      fields: { name: 'Theirs', phone: '+14155550290' },
    });
    const lead = await post(body({ recipients: { lead_ids: [leads.dana, theirs?.id] } }));
    expect([lead.status, lead.body.error]).toEqual([
      404,
      expect.objectContaining({ code: 'resource_not_found', param: 'recipients.lead_ids' }),
    ]);
    const rcpRes = await post(body(), { as: other.auth });
    expect([rcpRes.status, rcpRes.body.error?.param]).toEqual([404, 'receptionist_id']);
    const ready = await post(body({ receptionist_id: notReady }));
    expect([ready.status, ready.body.error?.code]).toEqual([409, 'receptionist_not_ready']);
    const read = await ctx.keyFor(tenantId, ['read']);
    expect((await post(body(), { as: read.auth })).status).toBe(403);
  });

  it('Idempotency-Key: a replay is the same campaign; another body a 422', async () => {
    const first = await post(body({ name: 'Keyed' }), { key: 'cmp-key-1' });
    expect(first.status).toBe(202);
    const again = await post(body({ name: 'Keyed' }), { key: 'cmp-key-1' });
    expect([again.status, again.headers['idempotent-replayed']]).toEqual([202, 'true']);
    expect(again.body).toEqual(first.body);
    const other = await post(body({ name: 'Other' }), { key: 'cmp-key-1' });
    expect([other.status, other.body.error?.code]).toEqual([422, 'idempotency_key_reused']);
    // Redis forgot the response: the Postgres backstop still replays.
    await ctx.redis.del(idempotencyRedisKey(ctx.config.queuePrefix, tenantId, 'cmp-key-1'));
    const late = await post(body({ name: 'Keyed' }), { key: 'cmp-key-1' });
    expect([late.status, late.body.id, late.headers['idempotent-replayed']]).toEqual([
      202,
      first.body.id,
      'true',
    ]);
    expect(await ctx.deps.knex('campaigns').where({ name: 'Keyed' }).count({ n: '*' })).toEqual([
      { n: '1' },
    ]);
  });
});

describe('GET /campaigns and cancel', () => {
  it('lists newest first across pages; a foreign id is a 404', async () => {
    const other = await ctx.tenant(['write']);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: request.Response = await request(ctx.app)
        .get(PATH)
        .query(cursor ? { limit: 3, cursor } : { limit: 3 })
        .set('Authorization', auth);
      expect(page.status).toBe(200);
      ids.push(...page.body.data.map((c: { id: string }) => c.id));
      cursor = page.body.cursor;
    } while (cursor);
    const expected = (
      await ctx.deps
        .knex('campaigns')
        .where({ tenant_id: tenantId })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
    ).map((r: { id: string }) => r.id);
    expect(ids).toEqual(expected);
    expect(ids.length).toBeGreaterThan(3);
    const foreign = await request(ctx.app)
      .get(`${PATH}/${ids[0]}`)
      .set('Authorization', other.auth);
    expect(foreign.status).toBe(404);
    const list = await request(ctx.app).get(PATH).set('Authorization', other.auth);
    expect(list.body).toEqual({ data: [], has_more: false, cursor: null });
  });

  it('cancels a queued campaign (200, recipients canceled); again is a 409 invalid_state', async () => {
    const { body: created } = await post(body());
    const res = await request(ctx.app)
      .post(`${PATH}/${created.id}/cancel`)
      .set('Authorization', auth);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, status: 'canceled', recipients: 3, sent: 0 });
    expect((await recipientsOf(created.id)).map((r) => r.state)).toEqual([
      'canceled',
      'canceled',
      'canceled',
    ]);
    const again = await request(ctx.app)
      .post(`${PATH}/${created.id}/cancel`)
      .set('Authorization', auth);
    expect([again.status, again.body.error?.code]).toEqual([409, 'invalid_state']);
    const other = await ctx.tenant(['write']);
    const foreign = await request(ctx.app)
      .post(`${PATH}/${created.id}/cancel`)
      .set('Authorization', other.auth);
    expect(foreign.status).toBe(404);
  });
});
