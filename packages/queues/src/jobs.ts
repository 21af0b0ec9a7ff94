import type { JobsOptions } from 'bullmq';

/**
 * Job payloads. They carry ids only (never secrets or bodies): processors reload the rows
 * from Postgres. `v` versions the shape so a deploy can read jobs queued by the previous one.
 */
export interface EventJob {
  v: 1;
  eventId: string;
}

export interface DeliveryJob {
  v: 1;
  deliveryId: string;
  round: number;
  /** The attempt this job performs (1-based within the round). */
  attempt: number;
}

export interface OutboundCallJob {
  v: 1;
  callId: string;
}

/** Deterministic job ids: re-adding a job that still exists is a no-op. No ':' allowed. */
export const jobIds = {
  event: (eventId: string) => eventId,
  delivery: (j: Omit<DeliveryJob, 'v'>) => `${j.deliveryId}-r${j.round}-a${j.attempt}`,
  outboundCall: (callId: string) => callId,
};

/**
 * Defaults for every job. Completed and failed jobs are removed so that a job id can be
 * reused by the reconciler; BullMQ's own retries only cover infrastructure errors (Postgres
 * away), because delivery attempts are scheduled explicitly as delayed jobs.
 */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  removeOnComplete: true,
  removeOnFail: true,
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** Validates job data at the processor boundary (jobs outlive deploys). */
export const parseEventJob = (d: unknown): EventJob | null =>
  isObject(d) && d.v === 1 && typeof d.eventId === 'string' ? (d as unknown as EventJob) : null;

export const parseDeliveryJob = (d: unknown): DeliveryJob | null =>
  isObject(d) &&
  d.v === 1 &&
  typeof d.deliveryId === 'string' &&
  Number.isInteger(d.round) &&
  Number.isInteger(d.attempt)
    ? (d as unknown as DeliveryJob)
    : null;

export const parseOutboundCallJob = (d: unknown): OutboundCallJob | null =>
  isObject(d) && d.v === 1 && typeof d.callId === 'string'
    ? (d as unknown as OutboundCallJob)
    : null;
