import { Client } from 'pg';
import { commitAsynchronously, type UnpublishedEvent } from '@switchboard/db';
import { OUTBOX_CHANNEL } from '@switchboard/events';
import { enqueue, type EventJob } from '@switchboard/queues';
import { contextFromTraceparent, currentTraceparent, startSpan } from '@switchboard/telemetry';
import type { WorkerDeps } from '../deps';
import type { Component } from '../component';

const BATCH = 500;
/** Fallback poll: a missed notification (e.g. during a reconnect) delays an event this much. */
const POLL_MS = 1000;

/**
 * The job of one event. An event written under a trace gets an `outbox.relay` span in that
 * trace (ended at once: publishing is one batched statement for all of them), and the job
 * carries the span's context on to the fan-out. Without a trace nothing is added.
 */
function relayed(event: UnpublishedEvent): { data: EventJob } {
  if (!event.traceparent) return { data: { v: 1, eventId: event.id } };
  const { span, context } = startSpan('outbox.relay', {
    parent: contextFromTraceparent(event.traceparent),
    attributes: { 'switchboard.event_id': event.id },
  });
  span.end();
  const traceparent = currentTraceparent(context);
  return {
    data: traceparent ? { v: 1, eventId: event.id, traceparent } : { v: 1, eventId: event.id },
  };
}

/**
 * Publishes committed outbox events to the `events` queue. Woken by Postgres NOTIFY on every
 * commit, with a slow poll as a safety net. Rows are claimed with SKIP LOCKED, so several
 * workers relay in parallel without publishing one event twice in the common case; a
 * duplicate publish is harmless anyway (jobId = event id). The transaction commits
 * `published_at` only after the jobs are in Redis.
 */
export function startRelay(deps: WorkerDeps): Component {
  const { knex, queues, logger, metrics, stores } = deps;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;

  async function drainOnce(): Promise<number> {
    return knex.transaction(async (trx) => {
      const events = await stores.events.claimUnpublished(trx, BATCH);
      if (events.length === 0) return 0;
      const ids = events.map((e) => e.id);
      // A published_at lost in a crash only publishes the events again (job id = event id).
      await commitAsynchronously(trx);
      await enqueue(queues, 'events', events.map(relayed));
      await stores.events.markPublished(trx, ids);
      metrics.eventsRelayed.inc(ids.length);
      return ids.length;
    });
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
          while (!stopped && (await drainOnce()) === BATCH);
        } catch (err) {
          logger.warn({ err }, 'relay: publish failed; will retry');
        }
      } while (again && !stopped);
    })().finally(() => {
      running = null;
    });
  }

  let listener: Client | null = null;
  /** Keeps one LISTEN connection open, reconnecting after any loss; polling covers gaps. */
  function listen(): void {
    if (stopped) return;
    const client = new Client({ connectionString: deps.config.databaseUrl });
    const retry = (err: unknown) => {
      if (listener === client) listener = null;
      client.end().catch(() => undefined);
      if (stopped) return;
      logger.warn({ err }, 'relay: LISTEN connection unavailable; retrying');
      setTimeout(listen, POLL_MS * 2).unref();
    };
    client.on('notification', wake);
    client.once('error', retry);
    client
      .connect()
      .then(() => client.query(`LISTEN ${OUTBOX_CHANNEL}`))
      .then(() => {
        listener = client;
        wake();
      })
      .catch(retry);
  }
  listen();
  const poll = setInterval(wake, POLL_MS);

  return {
    name: 'relay',
    async close() {
      stopped = true;
      clearInterval(poll);
      await listener?.end().catch(() => undefined);
      await running;
    },
  };
}
