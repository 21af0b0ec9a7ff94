import { createKnex, createStores, type Knex } from '@switchboard/db';
import type { Deps } from '../../apps/api/src/deps';
import { createCampaign } from '../../apps/api/src/features/campaigns/create-campaign';
import type { WorkerDeps } from '../../apps/worker/src/deps';
import { sendNext } from '../../apps/worker/src/campaigns/send-next';
import type { SmsSender } from '../../apps/worker/src/sms';
import { campaignPhone } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { quietWorkerDeps } from '../support/worker-deps';
import { receptionistTenant } from '../support/receptionist';

// No read on the pool while a transaction is open: on a pool of ONE connection such a read
// waits for the connection its own transaction holds, until the acquire timeout fails it.
// Accepting a campaign and sending its messages (a refused one included, which reads why)
// must therefore work with a single connection.
let ctx: TestContext;
let worker: WorkerDeps;
let single: Knex;
let tenantId: string;
let rcp: string;

beforeAll(async () => {
  ctx = await createTestContext();
  worker = quietWorkerDeps(ctx.config);
  single = createKnex(ctx.config.databaseUrl, { poolMax: 1 });
  ({ tenantId, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: '+14155550100',
  }));
});
afterAll(async () => {
  await single?.destroy();
  await worker?.close();
  await ctx?.close();
});

/** The same deps over the one-connection pool. */
const onOneConnection = <T extends { knex: Knex; stores: unknown }>(deps: T): T => ({
  ...deps,
  knex: single,
  stores: createStores(single),
});

/** Never sends in process: the test only cares about the claim's transaction. */
const noInlineSends = { trySendNow: () => false } as unknown as SmsSender;

it('accepts a campaign and sends its messages on a pool of one connection', async () => {
  const api: Deps = onOneConnection(ctx.deps);
  const accepted = await createCampaign(
    api,
    tenantId,
    {
      name: 'One connection',
      receptionist_id: rcp,
      message: 'Hello',
      recipients: { phones: [campaignPhone(0), campaignPhone(1)] },
      send_rate_per_minute: 60,
      allow_repeat: true,
    },
    null,
    true,
  );
  expect(accepted.status).toBe(202);
  const campaignId = (accepted.body as { id: string }).id;
  await ctx.queues.campaigns.remove(campaignId);

  const deps = onOneConnection(worker);
  await deps.stores.campaignLifecycle.start(deps.knex, campaignId);
  expect(await sendNext(deps, noInlineSends, campaignId)).toBe('created');
  // The receptionist stops being ready: the next message is refused, and the claim's
  // transaction reads why (whyNotSendable) before it counts the recipient failed.
  await ctx.deps.knex('receptionists').where({ id: rcp }).update({ status: 'provisioning' });
  expect(await sendNext(deps, noInlineSends, campaignId)).toBe('skipped');
  const campaign = await deps.stores.campaigns.findById(deps.knex, campaignId);
  expect(campaign).toMatchObject({ recipients: 2, failed: 1 });
});
