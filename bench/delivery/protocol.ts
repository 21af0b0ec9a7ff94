/**
 * Messages between bench/delivery.ts and its HTTPS receiver (bench/delivery/receiver.ts),
 * over the child process's IPC channel. Times are wall-clock milliseconds with sub-millisecond
 * precision (`performance.timeOrigin + performance.now()`), comparable across processes on
 * one machine.
 */

/** What the receiver saw on one path prefix `/p/<phase>/…`. */
export interface PhaseStats {
  /** Requests answered. */
  count: number;
  /** Distinct (path, x-service-event-id) pairs: a redelivery counts once. */
  distinct: number;
  /** Receipt time of the first and the last request. */
  first: number;
  last: number;
}

/** One traced receipt: phase, subscription index (the last path segment), event id, time. */
export type Receipt = [phase: string, sub: string, eventId: string, at: number];

export type ToReceiver = { id: number; kind: 'stats' } | { id: number; kind: 'drain' };

export type FromReceiver =
  | { kind: 'ready'; port: number }
  | { id: number; kind: 'stats'; phases: Record<string, PhaseStats>; cpuMs: number }
  | { id: number; kind: 'records'; records: Receipt[] };

/** Wall clock with sub-millisecond precision. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

export function isFromReceiver(v: unknown): v is FromReceiver {
  return isObject(v) && typeof v.kind === 'string';
}

export function isToReceiver(v: unknown): v is ToReceiver {
  return isObject(v) && typeof v.id === 'number' && (v.kind === 'stats' || v.kind === 'drain');
}
