/**
 * The time-partitioned tables (docs/decisions/0056-partitioning-and-uniqueness.md): each is
 * range-partitioned on one timestamp that never changes once a row exists, by UTC day or UTC month.
 * Every table has, besides its ranges, an `<table>_archive` partition (MINVALUE up to the first
 * range) and an `<table>_default` partition (for rows dated beyond the ranges made so far), so no
 * row is ever refused for its date.
 */
export type PartitionInterval = 'day' | 'month';

export interface PartitionedTable {
  readonly table: string;
  /** The partition key: a timestamptz column that never changes once the row exists. */
  readonly key: string;
  readonly interval: PartitionInterval;
  /** Whether old partitions are dropped by the delivery retention (else rows are kept). */
  readonly deliveryHistory: boolean;
}

export const PARTITIONED_TABLES: readonly PartitionedTable[] = [
  { table: 'events', key: 'created_at', interval: 'day', deliveryHistory: true },
  { table: 'webhook_deliveries', key: 'created_at', interval: 'day', deliveryHistory: true },
  {
    table: 'webhook_delivery_attempts',
    key: 'attempted_at',
    interval: 'day',
    deliveryHistory: true,
  },
  { table: 'telephony_messages', key: 'received_at', interval: 'day', deliveryHistory: true },
  { table: 'calls', key: 'started_at', interval: 'month', deliveryHistory: false },
  { table: 'sms_messages', key: 'created_at', interval: 'month', deliveryHistory: false },
];

/** Ranges made ahead of the clock: 7 days, or the next 2 months. */
export const AHEAD: Record<PartitionInterval, number> = { day: 7, month: 2 };

/** The start (UTC) of the day or month holding `at`. */
export function floorTo(at: Date, interval: PartitionInterval): Date {
  return interval === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** `start` moved by `n` days or months (UTC). */
export function shift(start: Date, interval: PartitionInterval, n: number): Date {
  return interval === 'day'
    ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + n))
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + n, 1));
}

/** `<table>_pYYYYMMDD` or `<table>_pYYYYMM`: the name tells the range. */
export function partitionName(t: PartitionedTable, start: Date): string {
  const iso = start.toISOString();
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${t.interval === 'day' ? iso.slice(8, 10) : ''}`;
  return `${t.table}_p${stamp}`;
}

export const archiveName = (t: PartitionedTable): string => `${t.table}_archive`;
export const defaultName = (t: PartitionedTable): string => `${t.table}_default`;

/** The range a `_p…` name stands for; undefined for any other name. */
export function rangeOfName(
  t: PartitionedTable,
  name: string,
): { start: Date; end: Date } | undefined {
  const m = new RegExp(`^${t.table}_p(\\d{4})(\\d{2})(\\d{2})?$`).exec(name);
  if (!m || (t.interval === 'day') !== (m[3] !== undefined)) return undefined;
  const start = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3] ?? 1)));
  return { start, end: shift(start, t.interval, 1) };
}
