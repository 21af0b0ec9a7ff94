import request from 'supertest';
import type { WorkerDeps } from '../../apps/worker/src/deps';
import { completeCampaign } from '../../apps/worker/src/campaigns/outcome';
import { sendNext } from '../../apps/worker/src/campaigns/send-next';
import { campaignPhone } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { quietWorkerDeps } from '../support/worker-deps';
import { startTestWorker, waitFor } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';

// The campaign lifecycle's statements under concurrency (real Postgres, no worker running
// unless said): claims never overlap, nothing is claimed once canceled, completion is won
// once; and the reconciler's paths: a lost start job, a recipient left unsettled.
let ctx: TestContext;
let deps: WorkerDeps;
let auth: string;
let tenantId: string;
let rcp: string;

beforeAll(async () => {
  ctx = await createTestContext({ SIMULATOR_SPEED: '50' });
  deps = quietWorkerDeps(ctx.config);
  ({ auth, tenantId, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: '+14155550100',
  }));
});
afterAll(async () => {
  await deps?.close();
  await ctx?.close();
});

const lifecycle = () => deps.stores.campaignLifecycle;
const accept = async (recipients: number, offset: number) => {
  const res = await request(ctx.app)
    .post('/api/v1/campaigns')
    .set('Authorization', auth)
    .send({
      name: 'Race',
      receptionist_id: rcp,
      message: 'Hello',
      recipients: {
        phones: Array.from({ length: recipients }, (_, i) => campaignPhone(offset + i)),
      },
    });
  expect(res.status).toBe(202);
  // Without a worker the start job waits; this file drives the statements itself.
  await ctx.queues.campaigns.remove(res.body.id);
  return res.body.id as string;
};

it('concurrent claimers share the recipients, none twice; nothing is claimed after cancel', async () => {
  const id = await accept(10, 0);
  expect(await lifecycle().claimNext(deps.knex, id)).toBeUndefined(); // queued: not yet
  await lifecycle().start(deps.knex, id);
  const claims = await Promise.all(
    Array.from({ length: 25 }, () =>
      deps.knex.transaction((trx) => lifecycle().claimNext(trx, id)),
    ),
  );
  const seqs = claims.filter((c) => c !== undefined).map((c) => c.seq);
  expect(seqs.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

  const other = await accept(3, 100);
  await lifecycle().start(deps.knex, other);
  await ctx.deps.knex.transaction((trx) => lifecycle().cancel(trx, tenantId, other));
  expect(await lifecycle().claimNext(deps.knex, other)).toBeUndefined();
});

it('completion is won by exactly one of many concurrent transactions, which emits once', async () => {
  const id = await accept(2, 200);
  await lifecycle().start(deps.knex, id);
  await deps.knex('campaigns').where({ id }).update({ sent: 2 });
  const results = await Promise.all(
    Array.from({ length: 12 }, () =>
      deps.knex.transaction((trx) => completeCampaign(deps, trx, id)),
    ),
  );
  expect(results.filter(Boolean)).toHaveLength(1);
  const events = await deps
    .knex('events')
    .where({ type: 'campaign.completed' })
    .whereRaw("data->>'campaign_id' = ?", [id]);
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ receptionist_id: rcp, tenant_id: tenantId });
});

it('a receptionist that is no longer ready fails the recipients, and the campaign completes', async () => {
  const id = await accept(2, 500);
  await lifecycle().start(deps.knex, id);
  await deps.knex('receptionists').where({ id: rcp }).update({ status: 'provisioning' });
  // Nothing is stored, so nothing is ever handed to the SMS sender.
  const sms = {
    name: 'sms',
    onOutcome: () => undefined,
    trySendNow: () => false,
    close: async () => undefined,
  };
  try {
    expect(await sendNext(deps, sms, id)).toBe('skipped');
    expect(await sendNext(deps, sms, id)).toBe('finished');
  } finally {
    await deps.knex('receptionists').where({ id: rcp }).update({ status: 'ready' });
  }
  expect(await ctx.deps.stores.campaigns.findById(ctx.deps.knex, id)).toMatchObject({
    status: 'completed',
    recipients: 2,
    sent: 0,
    failed: 2,
  });
  expect(await deps.knex('sms_messages').where({ campaign_id: id })).toEqual([]);
});

it('the reconciler starts a campaign whose start job was lost and settles a stuck recipient', async () => {
  const lost = await accept(3, 300);
  // A recipient claimed and its message sent, but its outcome never applied to it (a path
  // that bypassed the SMS sender's settle): the reconciler repairs it.
  const stuck = await accept(1, 400);
  await lifecycle().start(deps.knex, stuck);
  const claim = await deps.knex.transaction(async (trx) => {
    const c = await lifecycle().claimNext(trx, stuck);
    await deps.stores.smsLifecycle.insertOutbound(trx, c?.smsId as string, {
      tenantId,
      receptionistId: rcp,
      to: c?.phone as string,
      message: 'Hello',
      segments: 1,
      metadata: {},
      campaignId: stuck,
      idempotency: null,
      at: new Date(),
    });
    return c;
  });
  await deps
    .knex('sms_messages')
    .where({ id: claim?.smsId })
    .update({ status: 'sent', sent_at: new Date() });

  const worker = await startTestWorker(ctx, {
    runner: { campaignPollMs: 100, reconcileIntervalMs: 100, reconcileGraceMs: 500 },
  });
  try {
    for (const id of [lost, stuck]) {
      await waitFor(`campaign ${id} completed`, async () => {
        const c = await ctx.deps.stores.campaigns.findById(ctx.deps.knex, id);
        return c?.status === 'completed';
      });
    }
    expect(await ctx.deps.stores.campaigns.findById(ctx.deps.knex, lost)).toMatchObject({
      sent: 3,
    });
    expect(await ctx.deps.stores.campaigns.findById(ctx.deps.knex, stuck)).toMatchObject({
      recipients: 1,
      sent: 1,
    });
  } finally {
    await worker.close();
  }
});
