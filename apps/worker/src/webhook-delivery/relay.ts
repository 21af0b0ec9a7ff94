import {
  isNew,
  listenChannel,
  type Knex,
  type OpenDelivery,
  type UnpublishedEvent,
} from '@switchboard/db';
import { OUTBOX_CHANNEL } from '@switchboard/events';
import { enqueue, MAX_RELAYED_DELIVERIES, type EventJob } from '@switchboard/queues';
import { contextFromTraceparent, currentTraceparent, startSpan } from '@switchboard/telemetry';
import type { WorkerDeps } from '../deps';
import type { Component } from '../component';

const BATCH = 500;
/** Fallback poll: a missed notification (e.g. during a reconnect) delays an event this much. */
const POLL_MS = 1000;
/**
 * At most this many event jobs wait in the events queue (all relays together, give or take
 * one batch each): the backlog stays in the outbox, where the relay takes tenants in turn.
 * An event of a quiet tenant therefore waits behind at most this many jobs, whatever another
 * tenant's burst: at a few hundred fan-outs a second, well under a second. Large enough
 * that every event job slot of many workers finds work between two refills.
 */
export const EVENTS_WINDOW = 200;
/**
 * While the window is full, how often the relay looks again: an event of a quiet tenant is
 * admitted within this (then runs on its tenant's turn, ahead of a burst's jobs); each look
 * is a Redis count and, with room, one claim (a few ms of Postgres).
 */
const REFILL_MS = 100;

/**
 * The deliveries an event job carries: those the relay's fan-out made for the event, if
 * every one is new and there are not too many; else none, and the job reads them back with
 * the fan-out statement.
 */
function carried(open: readonly OpenDelivery[] | undefined): EventJob['deliveries'] {
  const all = open ?? [];
  if (!all.every(isNew) || all.length > MAX_RELAYED_DELIVERIES) return undefined;
  return all.map((d) => ({
    id: d.id,
    ...(d.subscriptionId ? { subscriptionId: d.subscriptionId } : {}),
    ...(d.receptionistId ? { receptionistId: d.receptionistId } : {}),
  }));
}

/**
 * The job of one event, with the deliveries the relay made for it (`carried`). An event
 * written under a trace gets an `outbox.relay` span in that trace (ended at once:
 * publishing is one batched statement for all of them), and the job carries the span's
 * context on to the fan-out. Without a trace nothing is added.
 */
function relayed(
  event: UnpublishedEvent,
  open: readonly OpenDelivery[] | undefined,
): { data: EventJob } {
  const deliveries = carried(open);
  const job = {
    v: 1 as const,
    eventId: event.id,
    tenantId: event.tenantId,
    ...(deliveries ? { deliveries } : {}),
  };
  if (!event.traceparent) return { data: job };
  const { span, context } = startSpan('outbox.relay', {
    parent: contextFromTraceparent(event.traceparent),
    attributes: { 'switchboard.event_id': event.id },
  });
  span.end();
  const traceparent = currentTraceparent(context);
  return { data: traceparent ? { ...job, traceparent } : job };
}

export interface RelayOptions {
  /** Event jobs allowed to wait in the queue at once (default EVENTS_WINDOW). */
  window?: number;
  /**
   * The pool of the claim's transaction (default the process's): the worker passes its
   * delivery statements' pool, whose sessions plan each prepared statement once (./index.ts).
   */
  db?: Knex;
}

/**
 * Fans committed outbox events out and publishes them to the `events` queue. Woken by
 * Postgres NOTIFY on every commit, with a slow poll as a safety net. Rows are claimed with
 * SKIP LOCKED, so several workers relay in parallel without publishing one event twice in the
 * common case; a duplicate publish is harmless anyway (jobId = event id). The claim's
 * transaction runs the fan-out statement (DeliveryLifecycle.publish): the event's outbox row
 * is deleted (the event row is never written again) and its deliveries are created, due now.
 * The event jobs are added after the commit; each attempts its event's new deliveries
 * (./fan-out.ts). A relay that dies between the commit and the add leaves deliveries due and
 * unclaimed, which the reconciler finds overdue and gives delivery jobs.
 *
 * Fair between tenants: the queue holds at most a window of event jobs, topped up as fan-out
 * takes them, and each top-up takes every tenant with unpublished events in turn
 * (EventsStore.claimUnpublished). A tenant's burst waits in the outbox, not in front of
 * other tenants' events in the queue; within the window, tenants take turns too (the job
 * names its tenant: packages/queues/src/fair.ts).
 */
export function startRelay(deps: WorkerDeps, opts: RelayOptions = {}): Component {
  const { queues, logger, metrics, stores } = deps;
  const window = opts.window ?? EVENTS_WINDOW;
  const db = opts.db ?? deps.knex;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;
  /** The last tenant served, where the next batch starts (round-robin over many tenants). */
  let cursor = '';
  let refill: NodeJS.Timeout | undefined;

  /** Jobs published and not yet taken by a fan-out. */
  async function queued(): Promise<number> {
    const counts = await queues.events.getJobCounts('wait', 'prioritized', 'paused');
    return (counts.wait ?? 0) + (counts.prioritized ?? 0) + (counts.paused ?? 0);
  }

  /** One batch: `full` when the window had no room, else the events published (and asked). */
  async function drainOnce(): Promise<'full' | { published: number; asked: number }> {
    const room = Math.min(BATCH, window - (await queued()));
    if (room <= 0) return 'full';
    // The claim and the fan-out are prepared statements; on the statements' pool they are
    // planned once per connection instead of at every batch: 2.1 ms of Postgres CPU a batch,
    // most batches one event at a steady rate (docs/benchmarks/delivery.md, "The relay's plans").
    const { events, open } = await db.transaction(async (trx) => {
      const claimed = await stores.events.claimUnpublished(trx, room, { after: cursor });
      if (claimed.events.length === 0) return { events: [], open: [] };
      cursor = claimed.next;
      // The fan-out statement makes this transaction's commit asynchronous (its
      // ASYNC_COMMIT_CTE). Lost in a Postgres crash, the rows stay unpublished and this relay
      // claims them again, making new deliveries; an event job already added for the lost
      // ones claims nothing (the rows are gone), and the new deliveries, due and unclaimed,
      // are the reconciler's (docs/decisions/0073-event-job-carries-its-deliveries.md).
      // Unpublished, the events were never fanned out: only the deliveries made now are read back
      // (publish).
      const made = await stores.deliveryLifecycle.publish(
        trx,
        claimed.events.map((e) => e.id),
      );
      return { events: claimed.events, open: made };
    });
    if (events.length === 0) return { published: 0, asked: room };
    const byEvent = new Map<string, OpenDelivery[]>();
    for (const d of open) {
      const list = byEvent.get(d.eventId);
      if (list) list.push(d);
      else byEvent.set(d.eventId, [d]);
    }
    // After the commit, so that the job sees the deliveries. A crash before the jobs are in
    // Redis leaves them due and unclaimed: the reconciler adds their delivery jobs.
    await enqueue(
      queues,
      'events',
      events.map((e) => relayed(e, byEvent.get(e.id))),
    );
    metrics.eventsRelayed.inc(events.length);
    return { published: events.length, asked: room };
  }

  /** Runs drains back to back until the outbox is empty; coalesces concurrent wake-ups. */
  function wake(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          for (;;) {
            if (stopped) break;
            const done = await drainOnce();
            if (done === 'full') {
              // The window is full: look again soon (fan-out frees room continuously).
              clearTimeout(refill);
              refill = setTimeout(wake, REFILL_MS);
              refill.unref();
              break;
            }
            if (done.published < done.asked) break;
          }
        } catch (err) {
          logger.warn({ err }, 'relay: publish failed; will retry');
        }
      } while (again && !stopped);
    })().finally(() => {
      running = null;
    });
  }

  // Woken by every committed outbox row; each (re)connection drains what came meanwhile.
  const listener = listenChannel(deps.config.databaseUrl, OUTBOX_CHANNEL, {
    onNotify: wake,
    onUp: wake,
    onLoss: (err) => logger.warn({ err }, 'relay: LISTEN connection unavailable; retrying'),
  });
  const poll = setInterval(wake, POLL_MS);

  return {
    name: 'relay',
    async close() {
      stopped = true;
      clearInterval(poll);
      clearTimeout(refill);
      await listener.close();
      await running;
    },
  };
}
