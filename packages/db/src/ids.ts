import { randomUUID } from 'node:crypto';

/** Type prefixes of public ids (docs/API.md, Basics); a prefix is part of the public id format. */
export type IdPrefix =
  | 'ten'
  | 'key'
  | 'rcp'
  | 'call'
  | 'sms'
  | 'lead'
  | 'imp'
  | 'cmp'
  | 'evt'
  | 'dlv'
  | 'att'
  | 'ps'
  | 'rec'
  | 'tdd';

/** A new opaque id: the type prefix and 128 random bits as 32 hex characters. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomUUID().replace(/-/g, '')}`;
}

/**
 * Ids of the rows of day-partitioned tables that are looked up by id alone (events,
 * deliveries) carry their creation time, so that a lookup prunes to one partition
 * (docs/decisions/0057-time-ordered-ids-and-bounded-statements.md). The 32 hex characters are laid
 * out as a UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, the version nibble 7, then 74 random
 * bits. Ids made before (random UUIDv4, nibble 4 at the same place) never match, and their lookups
 * probe every partition as they always did.
 */
export type TimeOrderedPrefix = 'evt' | 'dlv';

const TIME_ORDERED = /^(evt|dlv)_[0-9a-f]{12}7[0-9a-f]{19}$/;

/** Hex digits after the version nibble; the largest step between two ids of a millisecond. */
const TAIL_DIGITS = 19;
const TAIL_STEP = 2n ** 32n;
/** A millisecond's first tail: random, its top bit clear (2^75 of room for the steps). */
const FIRST_TAIL_MASK = 2n ** BigInt(4 * TAIL_DIGITS - 1) - 1n;

/** Per prefix, the last id this process made: its millisecond and its tail. */
const lastMade = new Map<TimeOrderedPrefix, { ms: number; tail: bigint }>();

/**
 * A time-ordered id for a row whose partition key is `at` (exactly, to the millisecond). Ids
 * this process makes for one millisecond increase in the order they are made (RFC 9562,
 * monotonic random: the tail grows by a random step of at most 2^32), so rows listed by
 * `(created_at, id)` keep the order they were made in, a batch's included. A new
 * millisecond's first tail is random with its top bit clear: 2^75 of room for the steps.
 */
export function newTimeOrderedId(prefix: TimeOrderedPrefix, at: Date): string {
  const ms = at.getTime();
  const last = lastMade.get(prefix);
  const fresh = BigInt(`0x${randomUUID().replace(/-/g, '').slice(13)}`);
  const tail = last?.ms === ms ? last.tail + 1n + (fresh % TAIL_STEP) : fresh & FIRST_TAIL_MASK;
  lastMade.set(prefix, { ms, tail });
  const hex = tail.toString(16).padStart(TAIL_DIGITS, '0');
  return `${prefix}_${ms.toString(16).padStart(12, '0')}7${hex}`;
}

/** The creation time an id carries; null for an id that carries none. */
export function timeOfId(id: string): Date | null {
  return TIME_ORDERED.test(id) ? new Date(parseInt(id.slice(4, 16), 16)) : null;
}

/** The largest ordinal an id made by SQL carries; rows after it share it. */
const MAX_ORDINAL = 0xffff;

/**
 * SQL: a new time-ordered id made from the transaction's `now()`, for a row whose partition
 * key defaults to `now()` in the same statement. Every row of a statement shares that
 * millisecond, so its ids alone order its rows: with `ordinal` (an SQL expression, 1, 2, …
 * in the order the rows are to list, as `(created_at, id)` lists them), the tail's first four
 * hex digits carry it (at most MAX_ORDINAL) and the other 15 are random (60 bits); without
 * it, the tail is random (74 bits) and one statement's rows list in no particular order.
 */
export const newTimeOrderedIdSql = (prefix: TimeOrderedPrefix, ordinal?: string): string => {
  const random = (from: number) => `substr(replace(gen_random_uuid()::text, '-', ''), ${from})`;
  const tail =
    ordinal === undefined
      ? random(14)
      : `lpad(to_hex(least(${ordinal}, ${MAX_ORDINAL})), 4, '0') || ${random(18)}`;
  return (
    `'${prefix}_' || lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') ` +
    `|| '7' || ${tail}`
  );
};

/**
 * SQL: `column` within a second of the time `idExpr` carries, or true when it carries none.
 * Every function in it is immutable, so Postgres prunes partitions with it at plan time for
 * a literal and at run time for a parameter or a nested loop's outer row. The second either
 * side absorbs the rounding of milliseconds to a timestamp.
 */
export function idTimeBoundsSql(idExpr: string, column: string): string {
  const t = idTimeSql(idExpr);
  return (
    `(${column} >= coalesce(${t} - interval '1 second', '-infinity') ` +
    `AND ${column} < coalesce(${t} + interval '1 second', 'infinity'))`
  );
}

/** SQL: the time `idExpr` carries, or NULL. */
const idTimeSql = (idExpr: string): string =>
  `(CASE WHEN ${idExpr} ~ '${TIME_ORDERED.source}' ` +
  `THEN to_timestamp(('x' || substr(${idExpr}, 5, 12))::bit(48)::bigint / 1000.0) END)`;

/**
 * SQL: `column` (of rows made after the row `idExpr` names, by Postgres' clock) no earlier
 * than an hour before the time `idExpr` carries, or true when it carries none. The hour
 * allows for an application clock ahead of Postgres' (an event's id is made by the
 * application), as the claim's read of a delivery's event does.
 */
export function afterIdTimeSql(idExpr: string, column: string): string {
  return `${column} >= coalesce(${idTimeSql(idExpr)} - interval '1 hour', '-infinity')`;
}

/**
 * Bounds on the partition key of rows with these ids, for a statement's `key >= ? AND key <
 * ?`: a second either side of the times they carry, or unbounded when one carries none.
 */
export function idTimeWindow(ids: readonly string[]): TimeWindow {
  const times = ids.map(timeOfId);
  if (times.length === 0 || times.some((t) => t === null)) return ['-infinity', 'infinity'];
  const ms = (times as Date[]).map((t) => t.getTime());
  return [new Date(Math.min(...ms) - 1000), new Date(Math.max(...ms) + 1000)];
}

/** Bounds on a partition key: a time, or Postgres' '-infinity' / 'infinity' (unbounded). */
export type TimeWindow = [Date | string, Date | string];

/**
 * `window` widened by `beforeMs` below and `afterMs` above; an unbounded side stays so. A
 * batch statement passes such bounds as plain parameters beside its per-row ones: Postgres
 * prunes partitions with them when it plans, where per-row bounds prune only while running
 * (after every partition and its indexes were planned).
 */
export function widenTimeWindow(window: TimeWindow, beforeMs: number, afterMs: number): TimeWindow {
  const [from, to] = window;
  return [
    from instanceof Date ? new Date(from.getTime() - beforeMs) : from,
    to instanceof Date ? new Date(to.getTime() + afterMs) : to,
  ];
}
