import { listenChannel, type Knex } from '@switchboard/db';
import { OUTBOX_CHANNEL } from '@switchboard/events';
import type { WorkerDeps } from '../deps';
import type { Component } from '../component';
import type { FirstAttempts } from './first-attempts';

const BATCH = 500;
/** Fallback poll: a missed notification (e.g. during a reconnect) delays an event this much. */
const POLL_MS = 1000;

export interface RelayOptions {
  /** Who makes the first attempts of the deliveries the relay creates (claimed). */
  attempts: FirstAttempts;
  /** How long those claims last (WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS). */
  lockMs: number;
  /**
   * The pool of the claim's transaction (default the process's): the worker passes its
   * delivery statements' pool, whose sessions plan each prepared statement once (./index.ts).
   */
  db?: Knex;
}

/**
 * Fans committed outbox events out and makes their deliveries' first attempts. Woken by
 * Postgres NOTIFY on every commit, with a slow poll as a safety net. Rows are claimed with
 * SKIP LOCKED, so several workers relay in parallel without fanning one event out twice. The
 * claim's transaction runs the fan-out statement (DeliveryLifecycle.publish): the event's
 * outbox row is deleted (the event row is never written again) and its deliveries are
 * created, claimed by this process. After the commit the process attempts them itself
 * (./first-attempts.ts); a relay that dies after the commit leaves claims that lapse, and the
 * reconciler gives each a delivery job.
 *
 * Fair between tenants, and paced by the receivers: each batch claims at most as many events
 * as this process has room for first attempts (FirstAttempts.room), taking every tenant with
 * unpublished events in turn (EventsStore.claimUnpublished), except tenants whose share of
 * first attempts is in use; a finished attempt wakes the relay. A tenant's burst waits in
 * the outbox, not in front of other tenants' events.
 */
export function startRelay(deps: WorkerDeps, opts: RelayOptions): Component {
  const { logger, metrics, stores } = deps;
  const { attempts, lockMs } = opts;
  const db = opts.db ?? deps.knex;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;
  /** The last tenant served, where the next batch starts (round-robin over many tenants). */
  let cursor = '';
  /** Deliveries per event of each tenant's last batch: what its next events are taken as. */
  const perEvent = new Map<string, number>();

  /** One batch: `full` when there was no room, else the events published (and asked). */
  async function drainOnce(): Promise<'full' | { published: number; asked: number }> {
    const room = Math.min(BATCH, attempts.room());
    if (room <= 0) return 'full';
    // Asked before the claims are made: the attempts are sent within SEND_WITHIN_MS of it.
    const since = Date.now();
    const timer = metrics.relayBatches.startTimer();
    // The claim and the fan-out are prepared statements; on the statements' pool they are
    // planned once per connection instead of at every batch (docs/benchmarks/delivery.md,
    // "The relay's plans").
    const { events, made } = await db.transaction(async (trx) => {
      // A tenant whose share of first attempts is in use waits in the outbox.
      const claimed = await stores.events.claimUnpublished(trx, room, {
        after: cursor,
        skip: attempts.fullTenants(),
      });
      // No more of a tenant's events than its room takes, at its last deliveries per event
      // (one event at least): the rest stay in the outbox (locked until this commit, then
      // claimable again).
      const taken = new Map<string, number>();
      const events = claimed.events.filter((e) => {
        const n = taken.get(e.tenantId);
        const next = (n ?? 0) + (perEvent.get(e.tenantId) ?? 1);
        if (n !== undefined && next > attempts.roomFor(e.tenantId)) return false;
        taken.set(e.tenantId, next);
        return true;
      });
      if (events.length === 0) return { events: [], made: [] };
      cursor = claimed.next;
      // The fan-out statement makes this transaction's commit asynchronous (its
      // ASYNC_COMMIT_CTE). Lost in a Postgres crash, the rows stay unpublished and this relay
      // claims them again, making new deliveries; an attempt already made of a lost one is
      // recorded nowhere (its row is gone) and the event is delivered again, same event id.
      const made = await stores.deliveryLifecycle.publish(
        trx,
        events.map((e) => e.id),
        lockMs,
      );
      return { events, made };
    });
    if (events.length === 0) return { published: 0, asked: room };
    timer();
    const counts = new Map<string, [number, number]>();
    for (const e of events) counts.set(e.tenantId, [(counts.get(e.tenantId)?.[0] ?? 0) + 1, 0]);
    for (const c of made) {
      const n = counts.get(c.delivery.tenantId);
      if (n) n[1]++;
    }
    for (const [tenantId, [n, d]] of counts) perEvent.set(tenantId, Math.max(1, d / n));
    await attempts.start(made, since);
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
            // No room: an attempt that ends wakes the relay (FirstAttempts.whenRoom).
            if (done === 'full' || done.published < done.asked) break;
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
  attempts.whenRoom(wake);

  return {
    name: 'relay',
    async close() {
      stopped = true;
      clearInterval(poll);
      await listener.close();
      await running;
      await attempts.close();
    },
  };
}
