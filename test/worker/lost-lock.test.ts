import type { Knex } from '@switchboard/db';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { receptionistTenant } from '../support/receptionist';
import { emitCallStarted, waitFor } from '../support/worker';

// A delivery is sent twice only when the attempt that sent it could not record its outcome.
// A first attempt is taken under its job's BullMQ lock, not claimed in Postgres; when that
// lock lapses while the worker lives (the process stalled past it), BullMQ runs the job again,
// and the re-run hands the delivery to a recovered job that claims it and sends. The first
// run must then send nothing: it asks for its lock right before sending (AttemptHold.confirm).
//
// The interleaving is forced, not timed. The legacy webhook_url's secret is made at first use
// (resolveTarget, between the take and the send), and the test holds the receptionist's row
// lock, so both attempts wait there: the first run's with its job's lock deleted, as a lapse
// leaves it, and the recovered one with its claim written. Then both go on at once.
let world: WebhookWorld;

beforeAll(async () => {
  world = await startWebhookWorld(
    { '/hook': (_req, res) => void res.writeHead(204).end() },
    // A lease longer than the test: the first run's attempt stays taken, never claimed late.
    { runner: { leaseWaitMs: 60_000 } },
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

it('a taken attempt whose job lost its lock sends nothing: the recovered job sends it, once', async () => {
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
    // The first run took its attempt and waits for the secret.
    await waitFor('the first attempt to wait for the secret', () => someoneWaits(knex, 1));
    const delivery = (await knex('webhook_deliveries').where({ event_id: eventId }).first()) as {
      id: string;
      status: string;
      claims: number;
    };
    expect(delivery).toMatchObject({ status: 'pending', claims: 0 });
    // Its job's lock lapses, as when its worker stalls past it.
    const { queues, redis } = ctx.deps;
    const active = await queues.events.getActive();
    expect(active.map((j) => j.id)).toEqual([eventId]);
    expect(await redis.del(`${queues.events.toKey(eventId)}:lock`)).toBe(1);
    // BullMQ's stalled check runs the job again; the recovered job claims and waits too.
    await waitFor('the recovered attempt to claim and wait', async () => {
      const row = (await knex('webhook_deliveries').where({ id: delivery.id }).first()) as {
        status: string;
      };
      return row.status === 'delivering' && (await someoneWaits(knex, 2));
    });
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
