import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { signCarrierMessage } from '@switchboard/telephony';
import { createTestContext, type TestContext } from '../support/context';
import { messages } from '../support/fixtures';
import { receptionistTenant } from '../support/receptionist';

// The carrier's signature on telephony ingestion (docs/TELEPHONY.md, Who may report what):
// with SMS_CARRIER_SIGNING_SECRET set, an sms.inbound or sms.status needs it besides
// INGEST_TOKEN, so the token alone cannot forge a tenant's texts or receipts. Call messages
// (the voice platform's) need the token only.
const INGEST = '/internal/v1/telephony/events';
const RCP_PHONE = '+14155550177';
const SECRET = randomBytes(32).toString('hex');

let ctx: TestContext;
let tenantId: string;
let auth: string;
let rcp: string;
beforeAll(async () => {
  ctx = await createTestContext({ SMS_CARRIER_SIGNING_SECRET: SECRET });
  ({ tenantId, auth, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: RCP_PHONE,
  }));
});
afterAll(() => ctx.close());

/** Posts `body` as these exact bytes with the ingestion token and `headers`. */
const ingest = (body: string, headers: Record<string, string> = {}) =>
  request(ctx.app)
    .post(INGEST)
    .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
    .set('Content-Type', 'application/json')
    .set(headers)
    .send(body);
const now = () => Math.floor(Date.now() / 1000);

const expectRefused = (res: request.Response, reason: RegExp) => {
  expect(res.status).toBe(403);
  expect(res.body).toEqual({
    error: {
      type: 'permission_error',
      code: 'invalid_carrier_signature',
      message: expect.stringMatching(reason),
      doc_url: 'docs/API.md#error-invalid_carrier_signature',
    },
    request_id: res.headers['x-request-id'],
  });
};

const smsEvents = async (type: string, smsId?: string) =>
  (await ctx.deps.stores.events.listForTenant(tenantId)).filter(
    (e) => e.type === type && (smsId === undefined || e.data.sms_id === smsId),
  );

it('an inbound text with the ingestion token but no valid signature is a 403, and nothing is stored', async () => {
  const body = JSON.stringify(
    messages.smsInbound(rcp, RCP_PHONE, 'STOP', { from: '+14155550901' }),
  );
  const other = JSON.stringify(messages.smsInbound(rcp, RCP_PHONE, 'Hi', { from: '+14155550901' }));
  expectRefused(await ingest(body), /X-Carrier-Timestamp and X-Carrier-Signature are required/);
  expectRefused(
    await ingest(body, signCarrierMessage(randomBytes(32).toString('hex'), body)),
    /does not match/,
  );
  // Signed, but for another body, or too long ago.
  expectRefused(await ingest(body, signCarrierMessage(SECRET, other)), /does not match/);
  expectRefused(
    await ingest(body, signCarrierMessage(SECRET, body, now() - 301)),
    /within 300 s of now/,
  );
  expect(await smsEvents('sms.received')).toEqual([]);
  const optOuts = await request(ctx.app).get('/api/v1/sms/opt-outs').set('Authorization', auth);
  expect(optOuts.body.data).toEqual([]);

  // The same message, signed: applied (not a duplicate: the refusals recorded nothing).
  const res = await ingest(body, signCarrierMessage(SECRET, body));
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ accepted: true });
  expect(await smsEvents('sms.received')).toHaveLength(1);
});

it('a forged delivery receipt is a 403 and leaves the message as it was; the signed one moves it', async () => {
  const sent = await request(ctx.app)
    .post('/api/v1/sms/send')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to: '+14155550912', message: 'See you at 10.' });
  expect(sent.status).toBe(202);
  const id = sent.body.id as string;
  // The carrier took it (as the worker's sender records it).
  const { smsLifecycle } = ctx.deps.stores;
  expect(await smsLifecycle.claim(ctx.deps.knex, id)).toBeDefined();
  const providerMessageId = `SM${randomBytes(8).toString('hex')}`;
  await smsLifecycle.markSent(ctx.deps.knex, id, { sentAt: new Date(), providerMessageId });

  const receipt = JSON.stringify({
    id: `rcpt_${randomBytes(6).toString('hex')}`,
    type: 'sms.status',
    receptionist_id: rcp,
    provider_message_id: providerMessageId,
    status: 'undelivered',
    error_code: 'unreachable_handset',
    occurred_at: new Date().toISOString(),
  });
  expectRefused(await ingest(receipt), /required/);
  const detail = async () =>
    (await request(ctx.app).get(`/api/v1/sms/${id}`).set('Authorization', auth)).body;
  expect((await detail()).status).toBe('sent');
  expect(await smsEvents('sms.failed', id)).toEqual([]);

  expect((await ingest(receipt, signCarrierMessage(SECRET, receipt))).status).toBe(202);
  expect((await detail()).status).toBe('undelivered');
  expect(await smsEvents('sms.failed', id)).toHaveLength(1);
});

it("the voice platform's call messages need the ingestion token only", async () => {
  const started = JSON.stringify(
    messages.started(rcp, `CA${randomBytes(8).toString('hex')}`, new Date().toISOString()),
  );
  expect((await ingest(started)).status).toBe(202);
});
