import type { Knex } from '@switchboard/db';
import type { ReceivedRequest } from '../../packages/webhooks/src/testing/tls-receiver';
import type { Outcome } from './client';

/**
 * Acked versus delivered: every ingestion message the client saw a 202 for must have been
 * committed (its `call.started` event exists) and that event must have reached the receiver
 * at least once, always under its own event id.
 */
export interface DeliveryAccount {
  acked: number;
  /** Acked messages whose event is not in the database: lost at commit. */
  uncommitted: string[];
  /** Committed events the receiver never got. */
  undelivered: string[];
  /** Requests the receiver got for these events beyond the first of each. */
  duplicates: number;
  /** Requests whose X-Service-Event-Id header differs from the body's id. */
  mismatched: number;
}

/** The ids of the messages the API acknowledged (202) among `outcomes`. */
export const ackedRefs = (outcomes: Outcome[]): string[] =>
  outcomes.filter((o) => o.status === 202 && o.ref).map((o) => o.ref as string);

/** message id → the id of the `call.started` event it committed. */
export async function eventsOfMessages(
  knex: Knex,
  messageIds: string[],
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let i = 0; i < messageIds.length; i += 1000) {
    const { rows } = (await knex.raw(
      `SELECT m.id AS message, e.id AS event FROM telephony_messages m
         JOIN events e ON e.type = 'call.started' AND e.data->>'call_id' = m.call_id
        WHERE m.id = ANY(?)`,
      [messageIds.slice(i, i + 1000)],
    )) as { rows: Array<{ message: string; event: string }> };
    for (const r of rows) found.set(r.message, r.event);
  }
  return found;
}

export function account(
  acked: string[],
  events: Map<string, string>,
  requests: readonly ReceivedRequest[],
  routePath: string,
): DeliveryAccount {
  const received = new Map<string, number>();
  let mismatched = 0;
  for (const r of requests) {
    if (r.path !== routePath) continue;
    const id = r.headers['x-service-event-id'] as string;
    received.set(id, (received.get(id) ?? 0) + 1);
    try {
      if ((JSON.parse(r.body) as { id?: string }).id !== id) mismatched++;
    } catch {
      mismatched++;
    }
  }
  const uncommitted = acked.filter((m) => !events.has(m));
  const wanted = acked.map((m) => events.get(m)).filter((e): e is string => !!e);
  const undelivered = wanted.filter((e) => !received.has(e));
  const duplicates = wanted.reduce((sum, e) => sum + Math.max(0, (received.get(e) ?? 0) - 1), 0);
  return { acked: acked.length, uncommitted, undelivered, duplicates, mismatched };
}

/**
 * Waits (bounded by `timeoutMs`) until every acked message's event has reached `routePath`,
 * logging progress; returns the final account either way.
 */
export async function awaitDelivery(opts: {
  knex: Knex;
  acked: string[];
  requests: readonly ReceivedRequest[];
  routePath: string;
  timeoutMs: number;
  log(line: string): void;
}): Promise<DeliveryAccount & { drainedMs: number }> {
  const started = Date.now();
  let lastLog = started;
  let events = new Map<string, string>();
  for (;;) {
    // Re-read while some are missing: a message acked late may still be committing.
    if (events.size < opts.acked.length)
      events = await eventsOfMessages(opts.knex, opts.acked).catch(() => events);
    const a = account(opts.acked, events, opts.requests, opts.routePath);
    const done = a.uncommitted.length === 0 && a.undelivered.length === 0;
    if (done || Date.now() - started > opts.timeoutMs)
      return { ...a, drainedMs: Date.now() - started };
    if (Date.now() - lastLog > 5000) {
      lastLog = Date.now();
      opts.log(
        `  waiting for delivery: ${a.acked - a.undelivered.length - a.uncommitted.length}/${a.acked} delivered`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Problems of an account, in words (empty when every acked event was delivered). */
export function accountProblems(a: DeliveryAccount, what = 'acked event'): string[] {
  const problems: string[] = [];
  if (a.uncommitted.length)
    problems.push(
      `${a.uncommitted.length} ${what}(s) acked but not committed, e.g. ${a.uncommitted[0]}`,
    );
  if (a.undelivered.length)
    problems.push(`${a.undelivered.length} ${what}(s) never delivered, e.g. ${a.undelivered[0]}`);
  if (a.mismatched) problems.push(`${a.mismatched} request(s) whose event id header ≠ body id`);
  return problems;
}
