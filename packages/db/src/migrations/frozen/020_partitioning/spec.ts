/**
 * Frozen with migration 020 (./index.ts): the tables it partitions and how their partitions
 * are named, as they were when it was written. The live layout is packages/db/src/partitions.
 */
export type PartitionInterval = 'day' | 'month';

export interface PartitionedTable {
  readonly table: string;
  /** The partition key: a timestamptz column that never changes once the row exists. */
  readonly key: string;
  readonly interval: PartitionInterval;
}

/** In this order: the events' switch drops the deliveries' key to it before deliveries are copied. */
export const PARTITIONED_TABLES: readonly PartitionedTable[] = [
  { table: 'events', key: 'created_at', interval: 'day' },
  { table: 'webhook_deliveries', key: 'created_at', interval: 'day' },
  { table: 'webhook_delivery_attempts', key: 'attempted_at', interval: 'day' },
  { table: 'telephony_messages', key: 'received_at', interval: 'day' },
  { table: 'calls', key: 'started_at', interval: 'month' },
  { table: 'sms_messages', key: 'created_at', interval: 'month' },
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
