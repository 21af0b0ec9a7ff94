import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { messages, uid } from '../support/fixtures';
import { receptionistTenant } from '../support/receptionist';

// A completed inbound call whose outcome is lead_captured makes (or fills in) the caller's
// lead, in the same transaction as the call's completion.
let ctx: TestContext;
let tenantId: string;
let auth: string;
let rcp: string;

beforeAll(async () => {
  ctx = await createTestContext();
  ({ tenantId, auth, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: '+14155550199',
  }));
});
afterAll(() => ctx.close());

const ingest = (message: object) =>
  request(ctx.app)
    .post('/internal/v1/telephony/events')
    .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
    .send(message);

/** An inbound call from `phone` that ended with `outcome`. */
function ended(phone: string, outcome: string, name = 'Dana Whitfield') {
  const at = new Date();
  const m = messages.ended(
    rcp,
    `pc_${uid()}`,
    new Date(at.getTime() - 60_000).toISOString(),
    at.toISOString(),
  );
  return {
    ...m,
    from: phone,
    customer_phone: phone,
    customer_name: name,
    outcome,
    booking: undefined,
  };
}
const leadEvents = async () =>
  (await ctx.deps.stores.events.listForTenant(tenantId)).filter((e) => e.type.startsWith('lead.'));

describe('lead_captured calls', () => {
  it('creates the caller’s lead with source call and the receptionist, emitting lead.created', async () => {
    const message = ended('+14155550150', 'lead_captured');
    const res = await ingest(message);
    expect(res.status).toBe(202);
    const [lead] = await ctx.deps
      .knex('leads')
      .where({ tenant_id: tenantId, phone: '+14155550150' });
    expect(lead).toMatchObject({
      name: 'Dana Whitfield',
      source: 'call',
      status: 'new',
      receptionist_id: rcp,
    });
    const call = await ctx.deps
      .knex('calls')
      .where({ provider_call_id: message.provider_call_id })
      .first();
    expect(lead.metadata).toEqual({ call_id: call.id });
    const events = await leadEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'lead.created', receptionistId: rcp });
    expect(events[0]?.data).toMatchObject({ lead_id: lead.id, source: 'call' });
    // A replayed message changes nothing.
    expect((await ingest(message)).status).toBe(200);
    expect(await leadEvents()).toHaveLength(1);
  });

  it('fills the blanks of a known caller’s lead (lead.updated), and leaves a full one alone', async () => {
    const lead = (
      await request(ctx.app)
        .post('/api/v1/leads')
        .set('Authorization', auth)
        .send({ phone: '+14155550151', notes: 'From the web form' })
    ).body;
    const before = (await leadEvents()).length;
    await ingest(ended('+14155550151', 'lead_captured', 'Sam Ortiz'));
    const after = await leadEvents();
    expect(after).toHaveLength(before + 1);
    expect(after[after.length - 1]).toMatchObject({ type: 'lead.updated', receptionistId: rcp });
    expect(after[after.length - 1]?.data.changed_fields).toEqual(['name', 'receptionist_id']);
    const stored = await ctx.deps.stores.leads.get(ctx.deps.knex, tenantId, lead.id, true);
    expect(stored).toMatchObject({ name: 'Sam Ortiz', notes: 'From the web form', source: 'api' });
    // Called again, with another name: the lead already has one, so nothing changes.
    await ingest(ended('+14155550151', 'lead_captured', 'Samuel'));
    expect(await leadEvents()).toHaveLength(before + 1);
    expect(
      await ctx.deps.knex('leads').where({ tenant_id: tenantId, phone: '+14155550151' }),
    ).toHaveLength(1);
  });

  it('other outcomes make no lead', async () => {
    const before = (await leadEvents()).length;
    await ingest(ended('+14155550152', 'booked'));
    await ingest(ended('+14155550153', 'message_taken'));
    // A later lead_captured call is the positive signal that the two before made nothing.
    await ingest(ended('+14155550154', 'lead_captured'));
    const events = await leadEvents();
    expect(events).toHaveLength(before + 1);
    expect(events[events.length - 1]?.data.phone).toBe('+14155550154');
  });
});
