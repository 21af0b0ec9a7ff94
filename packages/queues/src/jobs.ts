import type { JobsOptions } from 'bullmq';
import { REQUEST_REDIS_TIMEOUT_MS } from './connection';

/**
 * Defaults for every job. Completed and failed jobs are removed so that a job id can be
 * reused by a reconciler; BullMQ's own retries only cover infrastructure errors (Postgres
 * away), because delivery attempts are scheduled explicitly as delayed jobs.
 */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  removeOnComplete: true,
  removeOnFail: true,
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
};

/**
 * How long a request path waits for a job to be added before it answers anyway and leaves
 * the job to the reconciler (the row is committed already and is the truth). One value for
 * every route, so that no route hangs longer than another on a Redis outage.
 */
export const REQUEST_ENQUEUE_TIMEOUT_MS = REQUEST_REDIS_TIMEOUT_MS;
