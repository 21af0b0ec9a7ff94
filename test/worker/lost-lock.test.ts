import type { Knex } from '@switchboard/db';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { receptionistTenant } from '../support/receptionist';
import { emitCallStarted, waitFor } from '../support/worker';

// A delivery is sent twice only when the attempt that sent it could not record its outcome.
// Every attempt is claimed in Postgres (the relay's first attempts from the moment their rows
// are made) for WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS; when a live worker stalls past its
// claim, the reconciler hands the attempt to a recovered job, which claims it again and
// sends. The stalled attempt must then send nothing: it sends only within SEND_WITHIN_MS of
// its claim (apps/worker/src/webhook-delivery/deliver.ts).
//
// The interleaving is forced, not timed. The legacy webhook_url's secret is made at first use
// (resolveTarget, between the claim and the send), and the test holds the receptionist's row
// lock, so both attempts wait there: the relay's, until its claim lapses, and the recovered
// one with its claim written. Then both go on at once.
let world: WebhookWorld;

beforeAll(async () => {
  // Short claims: the relay's lapses after 2 s + 3 s.
  world = await startWebhookWorld(
    { '/hook': (_req, res) => void res.writeHead(204).end() },
    { env: { WEBHOOK_TIMEOUT_MS: '2000' } },
  );
});
afterAll(async () => {
  await world?.close();
});

/** Whether a backend is waiting for a lock on the receptionists table's rows. */
async function someoneWaits(knex: Knex, n: number): Promise<boolean> {
  const { rows } = (await knex.raw(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND query ILIKE '%update%receptionists%'`,
  )) as { rows: Array<{ n: number }> };
  return (rows[0]?.n ?? 0) >= n;
}

it('an attempt whose claim lapsed while its worker stalled sends nothing: the recovered job sends it, once', async () => {
  const { ctx } = world;
  const { knex } = ctx.deps;
  const { rcp, ...tenant } = await receptionistTenant(ctx, { phoneNumber: '+14155550123' });
  await ctx.deps.stores.receptionists.update(tenant.tenantId, rcp, {
    webhookUrl: `${world.base}/hook`,
  });
  const withheld = async () => (await world.worker.deps.metrics.attemptsWithheld.get()).values;

  const trx = await knex.transaction();
  let eventId = '';
  try {
    await trx('receptionists').where({ id: rcp }).forUpdate().select('id');
    eventId = await emitCallStarted(ctx, tenant.tenantId, rcp);
    // The relay made the delivery claimed, and its attempt waits for the secret.
    await waitFor('the first attempt to wait for the secret', () => someoneWaits(knex, 1));
    const delivery = (await knex('webhook_deliveries').where({ event_id: eventId }).first()) as {
      id: string;
    };
    expect(delivery).toMatchObject({ status: 'delivering', claims: 1 });
    // Its claim lapses (the worker is stalled there); the reconciler's recovered job claims
    // the delivery again and waits too.
    await waitFor(
      'the recovered attempt to claim and wait',
      async () => {
        const row = (await knex('webhook_deliveries').where({ id: delivery.id }).first()) as {
          claims: number;
        };
        return row.claims === 2 && (await someoneWaits(knex, 2));
      },
      { timeoutMs: 60_000 },
    );
  } finally {
    await trx.commit();
  }

  // The first run's end: it withholds its attempt, or (the defect this test guards) sends it.
  const posts = () =>
    world.receiver.requests.filter((r) => r.headers['x-service-event-id'] === eventId);
  await waitFor(
    'the first run to withhold or send',
    async () => posts().length >= 2 || (await withheld()).some((v) => v.value === 1),
  );
  const row = await waitFor('the delivery to succeed', async () => {
    const r = (await knex('webhook_deliveries').where({ event_id: eventId }).first()) as {
      status: string;
      attempts: number;
    };
    return r.status === 'succeeded' ? r : undefined;
  });
  expect(row.attempts).toBe(1);
  expect(posts()).toHaveLength(1);
}, 60_000);
