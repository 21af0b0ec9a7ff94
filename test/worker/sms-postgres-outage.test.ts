import request from 'supertest';
import type { WorkerDeps } from '../../apps/worker/src/deps';
import type { SmsProvider } from '../../apps/worker/src/sms';
import { sendProcessor } from '../../apps/worker/src/sms/send';
import { SmsOutcomeHooks } from '../../apps/worker/src/sms/outcome-hooks';
import { createTestContext, type TestContext } from '../support/context';
import { quietWorkerDeps } from '../support/worker-deps';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { receptionistTenant } from '../support/receptionist';

// Postgres goes away while a text is with the carrier. The carrier took it, so once Postgres
// is back the message must end `sent`, with its `sms.sent` and its usage: the sender retries
// the outcome's write in place until it commits, instead of leaving the message `sending`
// for the reconciler to fail as `send_interrupted`.
let pg: PrivatePostgres;
let ctx: TestContext;
let deps: WorkerDeps;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  const url = await pg.createMigratedDatabase('switchboard');
  ctx = await createTestContext({ DATABASE_URL: url });
  deps = quietWorkerDeps(ctx.config);
}, 60_000);
afterAll(async () => {
  await deps?.close();
  await ctx?.close();
  await pg?.destroy();
});

it('records a text the carrier took as sent, with its event and usage, across an outage', async () => {
  const { auth, tenantId, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: '+14155550100',
  });
  const res = await request(ctx.app)
    .post('/api/v1/sms/send')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to: '+14155550123', message: 'See you at 10' });
  expect(res.status).toBe(202);
  const smsId = res.body.id as string;
  // The carrier: Postgres stops during the hand-off, and comes back a few seconds later.
  let restarted: Promise<void> = Promise.resolve();
  const carrier: SmsProvider = {
    name: 'outage-carrier',
    async send() {
      await pg.stop('fast');
      restarted = new Promise((r) => setTimeout(r, 3_000)).then(() => pg.start());
      return { status: 'accepted', providerMessageId: 'carrier-1' };
    },
    async close() {},
  };
  const hooks = new SmsOutcomeHooks();
  await sendProcessor(deps, carrier, hooks, { staleSendingMs: 120_000 })({ v: 1, smsId });
  await restarted;
  const row = await ctx.deps.knex('sms_messages').where({ id: smsId }).first();
  expect(row).toMatchObject({ status: 'sent', provider_message_id: 'carrier-1' });
  const events = await ctx.deps.knex('events').where({ tenant_id: tenantId, type: 'sms.sent' });
  expect(events).toHaveLength(1);
  const usage = await ctx.deps.knex('usage_periods').where({ tenant_id: tenantId }).first();
  expect(usage?.sms_sent).toBe(1);
}, 60_000);
