import { listenChannel, type Knex } from '@switchboard/db';
import { OUTBOX_CHANNEL } from '@switchboard/events';
import type { WorkerDeps } from '../deps';
import type { Component } from '../component';
import type { FirstAttempts } from './first-attempts';

const BATCH = 500;
/** Fallback poll: a missed notification (e.g. during a reconnect) delays an event this much. */
const POLL_MS = 1000;
/**
 * A batch that made deliveries is followed by the next one no sooner than this after it
 * ended: the units its attempts free meanwhile are claimed in one statement, not one each
 * (a batch costs Postgres about a millisecond besides its rows). An event committed just
 * after a batch waits this much at most (decisions 0129, 0138: 4 ms kept a lone tenant's
 * units idle after their POSTs; 2 ms delivered 12–21 % more at the same Postgres CPU).
 */
const BATCH_GAP_MS = 2;

export interface RelayOptions {
  /** Who makes the first attempts of the deliveries the relay creates (claimed). */
  attempts: FirstAttempts;
  /** How long those claims last (WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS). */
  lockMs: number;
  /**
   * The pool of the relay's statement (default the process's): the worker passes its
   * delivery statements' pool, whose sessions plan each prepared statement once (./index.ts).
   */
  db?: Knex;
}

/**
 * Fans committed outbox events out and makes their deliveries' first attempts. Woken by
 * Postgres NOTIFY on every commit, with a slow poll as a safety net. Rows are claimed with
 * SKIP LOCKED, so several workers relay in parallel without fanning one event out twice.
 * One statement claims and fans out (DeliveryLifecycle.publishNext): the event's outbox row
 * is deleted (the event row is never written again) and its deliveries are created, claimed
 * by this process. After its commit the process attempts them itself
 * (./first-attempts.ts); a relay that dies after the commit leaves claims that lapse, and the
 * reconciler gives each a delivery job.
 *
 * Fair between tenants, and paced by the receivers: each batch claims at most as many
 * deliveries as this process has room for first attempts (FirstAttempts.rooms), taking every
 * tenant with events in the outbox in turn, a tenant's events only while they fit its share
 * of first attempts; a finished attempt wakes the relay. A tenant's burst waits in the
 * outbox, not in front of other tenants' events.
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
  /** When the last batch that made deliveries ended (ms). */
  let lastAt = 0;

  /**
   * One batch: `full` when there was no room, else the events it took out of the outbox, the
   * deliveries it made and the room it asked for.
   */
  async function drainOnce(): Promise<'full' | { relayed: number; made: number; asked: number }> {
    const { room, rooms, otherRoom } = await attempts.rooms();
    const limit = Math.min(BATCH, room);
    if (limit <= 0) return 'full';
    // Asked before the claims are made: the attempts are sent within SEND_WITHIN_MS of it.
    const since = Date.now();
    const timer = metrics.relayBatches.startTimer();
    // One statement (DeliveryLifecycle.publishNext): the claim and the fan-out, a tenant's
    // events while their deliveries fit its room; the rest stay in the outbox. Its commit is
    // asynchronous: lost in a Postgres crash, the events are back in the outbox and this relay
    // fans them out again (new deliveries); an attempt already made of a lost one is recorded
    // nowhere (its row is gone) and the event is delivered again, same event id. Prepared on
    // the statements' pool: planned once per connection (docs/benchmarks/delivery.md, "The
    // relay's plans").
    const { made, relayed, next } = await stores.deliveryLifecycle.publishNext(db, {
      after: cursor,
      rooms,
      otherRoom,
      limit,
      lockMs,
    });
    if (relayed === 0) return { relayed, made: 0, asked: limit };
    timer();
    cursor = next;
    await attempts.start(made, since);
    metrics.eventsRelayed.inc(relayed);
    return { relayed, made: made.length, asked: limit };
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
            const gap = lastAt + BATCH_GAP_MS - Date.now();
            if (gap > 0) await new Promise((r) => setTimeout(r, gap));
            if (stopped) break;
            const done = await drainOnce();
            if (done !== 'full' && done.made > 0) lastAt = Date.now();
            // No room, or nothing more fits: an attempt that ends wakes the relay
            // (FirstAttempts.whenRoom). Events that made no delivery (their subscriptions
            // gone meanwhile) cost no room: the next batch may find more.
            if (done === 'full' || done.relayed === 0) break;
            if (done.made > 0 && done.made < done.asked) break;
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
