import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Knex } from '@switchboard/db';
import { catalog, type CatalogKey, type Queues } from '@switchboard/queues';

/** The worker's Prometheus metrics, on a registry of its own (no global state). */
export interface Metrics {
  registry: Registry;
  deliveries: Counter<'outcome'>;
  attemptDuration: Histogram<'result'>;
  deliveryLag: Histogram;
  queueDepth: Gauge<'queue' | 'state'>;
  eventsRelayed: Counter;
  relayBatches: Histogram;
  deliveryWaits: Counter<'lane'>;
  firstAttempts: Counter<'path'>;
  deliveriesThrottled: Counter;
  attemptsWithheld: Counter;
  smsSent: Counter;
  smsFailed: Counter;
  campaignsCompleted: Counter;
  importRows: Counter;
  subscriptionsDisabled: Counter;
  outboxLag: Gauge;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'switchboard_worker_' });
  return {
    registry,
    deliveries: new Counter({
      name: 'switchboard_deliveries_total',
      help: 'Deliveries that reached an outcome (succeeded, retry, failed, canceled)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    attemptDuration: new Histogram({
      name: 'switchboard_delivery_attempt_seconds',
      help: 'Duration of one delivery attempt (HTTP POST)',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    deliveryLag: new Histogram({
      name: 'switchboard_delivery_lag_seconds',
      help: 'Event committed to the outbox → first successful attempt',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'switchboard_queue_jobs',
      help: 'Jobs per queue and state',
      labelNames: ['queue', 'state'],
      registers: [registry],
    }),
    eventsRelayed: new Counter({
      name: 'switchboard_events_relayed_total',
      help: 'Outbox events published to the events queue',
      registers: [registry],
    }),
    // Its count is the relay's batches (events relayed ÷ count: events a batch), its sum the
    // time they took: with one busy subscription, deliveries/s ≈ the subscription's cap ÷
    // (a batch's time + a POST's), docs/benchmarks/delivery.md.
    relayBatches: new Histogram({
      name: 'switchboard_relay_batch_seconds',
      help: "The relay's batches that published events: the claim and fan-out transaction, from its start to its commit",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    deliveryWaits: new Counter({
      name: 'switchboard_delivery_waits_total',
      help: 'Delivery jobs parked because a lane (target or tenant) had no free in-flight slot',
      labelNames: ['lane'],
      registers: [registry],
    }),
    firstAttempts: new Counter({
      name: 'switchboard_first_attempts_total',
      help: "First attempts of new deliveries, by how their event's job made them: inline, or handed to a delivery job (path job: no inline budget or no slot could be asked; parked: lane full)",
      labelNames: ['path'],
      registers: [registry],
    }),
    deliveriesThrottled: new Counter({
      name: 'switchboard_deliveries_throttled_total',
      help: "Delivery attempts that waited for a slot of their subscription's rate_limit_per_second (not failures)",
      registers: [registry],
    }),
    attemptsWithheld: new Counter({
      name: 'switchboard_delivery_attempts_withheld_total',
      help: 'Attempts claimed but not sent: their process stalled too long after the claim (SEND_WITHIN_MS), which is left to lapse and made again',
      registers: [registry],
    }),
    smsSent: new Counter({
      name: 'switchboard_sms_sent_total',
      help: 'SMS the provider accepted (recorded sent)',
      registers: [registry],
    }),
    smsFailed: new Counter({
      name: 'switchboard_sms_failed_total',
      help: 'SMS the provider rejected or that could not be handed over (recorded failed)',
      registers: [registry],
    }),
    campaignsCompleted: new Counter({
      name: 'switchboard_campaigns_completed_total',
      help: 'Campaigns that completed (every recipient sent, failed or opted out)',
      registers: [registry],
    }),
    subscriptionsDisabled: new Counter({
      name: 'switchboard_subscriptions_disabled_total',
      help: 'Webhook subscriptions disabled automatically after consecutive failed deliveries',
      registers: [registry],
    }),
    outboxLag: new Gauge({
      name: 'switchboard_outbox_oldest_unpublished_seconds',
      help: 'Age of the oldest outbox event not yet relayed to the events queue (0: none), read at each scrape',
      registers: [registry],
    }),
    importRows: new Counter({
      name: 'switchboard_lead_import_rows_total',
      help: 'Rows of lead imports processed (committed batches)',
      registers: [registry],
    }),
  };
}

/** The job states `switchboard_queue_jobs` reports. */
const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/**
 * Sets `switchboard_queue_jobs{queue, state}` for every queue of the job catalog (labelled
 * with the queue's name in Redis), so a queue added to the catalog is measured without
 * touching this. One queue failing to answer does not hide the others.
 */
export async function collectQueueDepths(metrics: Metrics, queues: Queues): Promise<void> {
  await Promise.allSettled(
    (Object.keys(catalog) as CatalogKey[]).map(async (key) => {
      const counts = await queues[key].getJobCounts(...QUEUE_STATES);
      for (const state of QUEUE_STATES) {
        metrics.queueDepth.set({ queue: catalog[key].queue, state }, counts[state] ?? 0);
      }
    }),
  );
}

/**
 * Sets `switchboard_outbox_oldest_unpublished_seconds`: how far the relay is behind (the
 * oldest row of the outbox by its primary key: event ids are time-ordered). Postgres away:
 * the gauge keeps its last value and the scrape still answers.
 */
export async function collectOutboxLag(metrics: Metrics, knex: Knex): Promise<void> {
  const { rows } = (await knex.raw(
    `SELECT EXTRACT(EPOCH FROM now() - (SELECT created_at FROM event_outbox
                                         ORDER BY event_id LIMIT 1))::float8 AS age`,
  )) as { rows: Array<{ age: number | null }> };
  metrics.outboxLag.set(Math.max(0, rows[0]?.age ?? 0));
}
