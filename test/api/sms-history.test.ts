import request from 'supertest';
import { newId } from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { addReceptionist, receptionistTenant } from '../support/receptionist';

// GET /api/v1/receptionists/{id}/sms (docs/API.md, Pagination and SMS): both directions,
// newest first by (created_at, id), keyset cursors bound to the tenant and the list, the
// same filters and limits as call history.
const RCP_PHONE = '+14155550100';
const BASE = Date.parse('2026-11-20T00:00:00.000Z');

let ctx: TestContext;
let auth: string;
let tenantId: string;
let rcp: string;
let otherRcp: string;

interface Item {
  id: string;
  direction: string;
  created_at: string;
}

/** Inserts a message as the API or ingestion would have stored it, at `createdAt`. */
async function insertSms(
  receptionistId: string,
  direction: 'inbound' | 'outbound',
  createdAt: Date,
): Promise<string> {
  const id = newId('sms');
  const customer = '+14155550123';
  await ctx.deps.knex('sms_messages').insert({
    id,
    tenant_id: tenantId,
    receptionist_id: receptionistId,
    direction,
    status: direction === 'inbound' ? 'received' : 'sent',
    from_number: direction === 'inbound' ? customer : RCP_PHONE,
    to_number: direction === 'inbound' ? RCP_PHONE : customer,
    message: `message ${id}`,
    segments: 1,
    created_at: createdAt,
    updated_at: createdAt,
    ...(direction === 'inbound' ? { received_at: createdAt, provider_message_id: id } : {}),
    ...(direction === 'outbound' ? { sent_at: createdAt } : {}),
  });
  return id;
}

const list = (query: string, receptionistId = rcp, as = auth) =>
  request(ctx.app)
    .get(`/api/v1/receptionists/${receptionistId}/sms?${query}`)
    .set('Authorization', as);

/** (created_at DESC, id DESC): strictly after the previous item. */
const after = (a: Item, b: Item) =>
  a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id);

beforeAll(async () => {
  ctx = await createTestContext();
  ({ auth, tenantId, rcp } = await receptionistTenant(ctx, {
    scopes: ['read'],
    phoneNumber: RCP_PHONE,
  }));
  otherRcp = await addReceptionist(ctx, tenantId, { name: 'Other', phoneNumber: '+14155550101' });
  // 60 messages over three days, in bursts of three that share one timestamp (ties on
  // created_at are broken by id), alternating directions; and a few of another receptionist.
  for (let i = 0; i < 60; i++) {
    const at = new Date(BASE + Math.floor(i / 3) * 3_600_000 * 3.5);
    await insertSms(rcp, i % 2 ? 'inbound' : 'outbound', at);
  }
  for (let i = 0; i < 5; i++) await insertSms(otherRcp, 'inbound', new Date(BASE + i));
});
afterAll(() => ctx.close());

describe('SMS history', () => {
  it('is newest first, both directions, with the message shape', async () => {
    const res = await list('limit=100');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ has_more: false, cursor: null });
    const items = res.body.data as Item[];
    expect(items).toHaveLength(60);
    for (let i = 1; i < items.length; i++)
      expect(after(items[i - 1] as Item, items[i] as Item)).toBe(true);
    expect(new Set(items.map((i) => i.direction))).toEqual(new Set(['inbound', 'outbound']));
    expect(Object.keys(items[0] as object).sort()).toEqual(
      [
        'campaign_id',
        'created_at',
        'delivered_at',
        'direction',
        'error_code',
        'error_message',
        'from',
        'id',
        'livemode',
        'message',
        'metadata',
        'receptionist_id',
        'received_at',
        'segments',
        'send_at',
        'sent_at',
        'status',
        'to',
      ].sort(),
    );
  });

  it('pages without skipping or repeating a row while messages arrive between pages', async () => {
    const first = await list('limit=100');
    const expected = (first.body.data as Item[]).map((i) => i.id);
    const seen: Item[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(`limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...(res.body.data as Item[]));
      cursor = res.body.cursor;
      expect(res.body.has_more).toBe(cursor !== null);
      // Newer messages (and one at the very instant of the newest) arrive meanwhile.
      await insertSms(rcp, 'inbound', new Date(BASE + 30 * 86_400_000));
      await insertSms(rcp, 'outbound', new Date(BASE + 19 * 3_600_000 * 3.5));
      pages++;
    } while (cursor && pages < 20);
    expect(pages).toBe(9);
    const walked = seen.map((i) => i.id).filter((id) => expected.includes(id));
    expect(walked).toEqual(expected);
    expect(new Set(seen.map((i) => i.id)).size).toBe(seen.length);
    for (let i = 1; i < seen.length; i++)
      expect(after(seen[i - 1] as Item, seen[i] as Item)).toBe(true);
  });

  it('filters by direction and date range (a bare date is the whole UTC day)', async () => {
    const inbound = await list('limit=100&direction=inbound&date_to=2026-11-22');
    expect((inbound.body.data as Item[]).every((i) => i.direction === 'inbound')).toBe(true);
    expect(inbound.body.data).toHaveLength(30);
    const day = await list('limit=100&date_from=2026-11-21&date_to=2026-11-21');
    const items = day.body.data as Item[];
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((i) => i.created_at.startsWith('2026-11-21'))).toBe(true);
    // 2026-11-21 holds bursts 7..13 (hours 24.5 to 45.5): 7 bursts of 3.
    expect(items).toHaveLength(21);
    const instant = await list(
      'limit=100&date_from=2026-11-20T03:30:00Z&date_to=2026-11-20T03:30:00.000Z',
    );
    expect(instant.body.data).toHaveLength(3);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['direction=sideways', 'direction'],
    ['date_from=yesterday', 'date_from'],
    ['date_to=2026-02-30', 'date_to'],
    ['date_from=2026-11-22&date_to=2026-11-21', 'date_from'],
  ])('%s → 400 naming the parameter', async (query, param) => {
    const res = await list(query);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param });
  });

  it('a cursor of another list, another tenant or tampered with is a 400 invalid_cursor', async () => {
    const page = await list('limit=5');
    const cursor = page.body.cursor as string;
    const { rcp: foreignRcp, ...other } = await receptionistTenant(ctx, {
      scopes: ['read'],
      name: 'Theirs',
    });
    const foreign = await list(`cursor=${cursor}`, foreignRcp, other.auth);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('invalid_cursor');
    // One character in the middle, changed in its top bit: the last characters of base64url
    // may carry padding bits, and a cursor ending in "AA" already changed nothing.
    const at = Math.floor(cursor.length / 2);
    const changed = `${cursor.slice(0, at)}${cursor[at] === 'A' ? 'g' : 'A'}${cursor.slice(at + 1)}`;
    const tampered = await list(`cursor=${changed}`);
    expect(tampered.status).toBe(400);
    expect(tampered.body.error.code).toBe('invalid_cursor');
    const calls = await request(ctx.app)
      .get(`/api/v1/receptionists/${rcp}/calls?cursor=${cursor}`)
      .set('Authorization', auth);
    expect(calls.status).toBe(400);
    expect(calls.body.error.code).toBe('invalid_cursor');
    // Positions are not bound to a receptionist: the cursor continues on another one's list.
    expect((await list(`cursor=${cursor}`, otherRcp)).status).toBe(200);
  });

  it("another tenant's receptionist is a 404; a malformed id a 400", async () => {
    const other = await ctx.tenant(['read']);
    const res = await list('', rcp, other.auth);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'resource_not_found', param: 'id' });
    expect((await list('', 'sms_123')).status).toBe(400);
    expect((await request(ctx.app).get(`/api/v1/receptionists/${rcp}/sms`)).status).toBe(401);
  });
});
