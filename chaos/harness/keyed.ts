import { randomBytes } from 'node:crypto';
import type { Knex } from '@switchboard/db';
import { send, type Outcome } from './client';

/** Attempts of one Idempotency-Key before the client gives up on it. */
const ATTEMPTS = 12;
/** Between two attempts of one key when the answer carried no Retry-After. */
const RETRY_MS = 1000;

/**
 * A lane of keyed writes as a careful client makes them: each request carries a new
 * Idempotency-Key and is retried with the same key and body (at most ATTEMPTS times, after
 * Retry-After or RETRY_MS) until it is answered 2xx or a 4xx other than 409; every attempt
 * is an outcome whose `ref` is the key. Stopping lets the key in hand finish its attempts.
 */
export function keyedLane(
  into: Outcome[],
  opts: {
    lane: string;
    url: string;
    auth: string;
    body(key: string): unknown;
    paceMs: number;
  },
): { stop(): Promise<void> } {
  let running = true;
  const done = (async () => {
    while (running) {
      const key = randomBytes(12).toString('hex');
      const body = opts.body(key);
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        const o = await send(opts.url, {
          lane: opts.lane,
          headers: { authorization: opts.auth, 'idempotency-key': key },
          body,
          ref: key,
        });
        into.push(o);
        const again = o.status === 0 || o.status === 409 || o.status >= 500;
        if (!again) break;
        const after = Number(o.retryAfter);
        await new Promise((r) => setTimeout(r, after > 0 ? Math.min(after, 5) * 1000 : RETRY_MS));
      }
      await new Promise((r) => setTimeout(r, opts.paceMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
    },
  };
}

/** What became of a lane's keys: each acknowledged one must exist once, under its id. */
export interface KeyedAccount {
  keys: number;
  /** Keys answered 2xx at least once. */
  acked: number;
  /** Keys never answered 2xx (the client gave up, or a 4xx). */
  unresolved: number;
  /** Acked keys whose row is not in the table (or under another id than answered). */
  lost: string[];
  /** Keys with more than one row, or answered with two different ids. */
  duplicated: string[];
}

/**
 * Checks the outcomes of a keyed lane against `table` (rows keyed by `idempotency_key` of
 * `tenantId`). Reads with retries: the pool may still hold connections the failover cut.
 */
export async function accountKeys(
  knex: Knex,
  table: string,
  tenantId: string,
  outcomes: Outcome[],
): Promise<KeyedAccount> {
  const answered = new Map<string, Set<string>>();
  const keys = new Set<string>();
  for (const o of outcomes) {
    if (!o.ref) continue;
    keys.add(o.ref);
    if (o.status >= 200 && o.status < 300 && o.id) {
      const ids = answered.get(o.ref) ?? new Set<string>();
      ids.add(o.id);
      answered.set(o.ref, ids);
    }
  }
  const rows = new Map<string, string[]>();
  const list = [...keys];
  for (let i = 0; i < list.length; i += 1000) {
    const found = await retry(
      () =>
        knex(table)
          .where({ tenant_id: tenantId })
          .whereIn('idempotency_key', list.slice(i, i + 1000))
          .select('id', 'idempotency_key') as Promise<
          Array<{ id: string; idempotency_key: string }>
        >,
    );
    for (const r of found)
      rows.set(r.idempotency_key, [...(rows.get(r.idempotency_key) ?? []), r.id]);
  }
  const lost: string[] = [];
  const duplicated: string[] = [];
  for (const [key, ids] of answered) {
    const stored = rows.get(key) ?? [];
    if (ids.size > 1 || stored.length > 1) duplicated.push(key);
    if (![...ids].every((id) => stored.includes(id))) lost.push(key);
  }
  for (const [key, stored] of rows)
    if (!answered.has(key) && stored.length > 1) duplicated.push(key);
  return {
    keys: keys.size,
    acked: answered.size,
    unresolved: keys.size - answered.size,
    lost,
    duplicated,
  };
}

/** `fn`, tried up to 5 times a second apart. */
export async function retry<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= 5) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
