import request from 'supertest';
import { campaignPhone, insertCampaignLeads } from '../support/campaigns';
import type { TestContext } from '../support/context';
import { subscribedTenant, type SubscribedTenant } from '../support/subscribed-tenant';
import { waitFor, type TestWorker } from '../support/worker';

// The worker counts what happens in it: SMS sent and failed, campaigns completed.
const RCP_PHONE = '+14155550100';
let ctx: TestContext;
let worker: TestWorker;
let auth: string;
let tenantId: string;
let rcp: string;

let world: SubscribedTenant;
beforeAll(async () => {
  world = await subscribedTenant({
    env: { SIMULATOR_SPEED: '20' },
    phoneNumber: RCP_PHONE,
  });
  ({ ctx, auth, tenantId, rcp } = world);
  worker = await world.startWorker({ campaignPollMs: 200 });
});
afterAll(() => world?.close());

async function value(name: string): Promise<number> {
  const text = await worker.deps.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

it('counts SMS sent and failed and the campaign completed', async () => {
  // 10 recipients; the carrier refuses every number ending in 0003 (one of them).
  const phones = Array.from({ length: 10 }, (_, i) => campaignPhone(i, 10));
  const rejected = phones.filter((p) => p.endsWith('0003')).length;
  expect(rejected).toBe(1);
  const leadIds = await insertCampaignLeads(ctx, tenantId, phones, 'metrics');
  const res = await request(ctx.app)
    .post('/api/v1/campaigns')
    .set('Authorization', auth)
    .send({
      name: 'Metrics',
      receptionist_id: rcp,
      message: 'Hi {{name}}',
      recipients: { lead_ids: leadIds },
      send_rate_per_minute: 600,
    })
    .expect(202);
  await waitFor('the campaign completed', async () => {
    const c = await request(ctx.app)
      .get(`/api/v1/campaigns/${res.body.id}`)
      .set('Authorization', auth);
    return c.body.status === 'completed';
  });
  await waitFor(
    'the completion counted',
    async () => (await value('switchboard_campaigns_completed_total')) === 1,
  );
  expect(await value('switchboard_sms_sent_total')).toBe(10 - rejected);
  expect(await value('switchboard_sms_failed_total')).toBe(rejected);
  expect(await ctx.deps.metrics.registry.metrics()).toMatch(
    /^switchboard_campaigns_started_total 1$/m,
  );
});
