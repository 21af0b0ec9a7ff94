import { DelayedError, UnrecoverableError, Worker, type Job, type Queue } from 'bullmq';
import {
  catalog,
  closeRedis,
  dropErrorsAfterClose,
  FairCounts,
  type Catalog,
  type CatalogKey,
  type JobData,
} from '@switchboard/queues';
import { withLogContext, type LogFields } from '@switchboard/logger';
import { contextFromTraceparent, inSpan, SpanKind } from '@switchboard/telemetry';
import type { Component } from './component';
import type { WorkerDeps } from './deps';

/**
 * The log fields of a job: its queue, its id, and every id its payload names, snake_cased
 * (`{eventId}` → `event_id`, `deliveryId` → `delivery_id`, `smsId`, `campaignId`...).
 */
export function jobLogFields(queue: string, jobId: string | undefined, data: unknown): LogFields {
  const fields: LogFields = { queue, job_id: jobId };
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (typeof value === 'string' && key.endsWith('Id')) {
      fields[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
    }
  }
  return fields;
}

/**
 * Overrides of a queue's BullMQ lock and stalled-check timings, which the job catalog sets
 * per queue (`catalog[key].timings`); tests shorten them so that crash recovery takes seconds.
 */
export interface QueueTimings {
  lockDurationMs?: number;
  stalledIntervalMs?: number;
}

export interface QueueWorkerOptions extends QueueTimings {
  concurrency: number;
}

/**
 * A processor receives the validated payload; the job (and the worker's lock token) are
 * there for its id and for moving it, e.g. back to delayed.
 */
export type JobHandler<K extends CatalogKey> = (
  data: JobData<Catalog[K]>,
  job: Job<JobData<Catalog[K]>>,
  token?: string,
) => Promise<void>;

/**
 * A BullMQ worker for one queue of the catalog, on its own duplicated connection (blocking
 * commands must not share one), with the production settings: error listeners attached,
 * stalled jobs recovered, the connection closed with the worker. One policy for a malformed
 * payload everywhere: logged and failed as unrecoverable (never retried, never processed).
 */
export function startQueueWorker<K extends CatalogKey>(
  deps: WorkerDeps,
  key: K,
  handler: JobHandler<K>,
  opts: QueueWorkerOptions,
): Component {
  const def = catalog[key];
  const connection = deps.redis.duplicate();
  const group = def.fairGroup as ((d: unknown) => string) | undefined;
  /**
   * On a queue whose jobs take turns by group (packages/queues/src/fair.ts), a job that
   * starts leaves its group's count, and one that goes back to delayed (parked) joins it
   * again. The job does not wait for either: the changes of one turn of the event loop go
   * to Redis in one call, in order. Not fatal: a count that is off only moves the group's
   * next jobs a little.
   */
  const counts = group ? new FairCounts(deps.queues[key] as unknown as Queue) : null;
  const warn = (err: unknown) => deps.logger.warn({ err, queue: def.queue }, 'fair count');
  const fairly = async (data: unknown, run: () => Promise<void>): Promise<void> => {
    if (!group || !counts) return run();
    const g = group(data);
    counts.started(g).catch(warn);
    try {
      await run();
    } catch (err) {
      if (err instanceof DelayedError) counts.requeued(g).catch(warn);
      throw err;
    }
  };
  const worker = dropErrorsAfterClose(
    new Worker(
      def.queue,
      async (job: Job, token?: string) => {
        const data = (def.parse as (d: unknown) => JobData<Catalog[K]> | null)(job.data);
        if (data === null) {
          deps.logger.error({ queue: def.queue, jobId: job.id }, 'malformed job data; dropped');
          throw new UnrecoverableError(`${def.queue} job ${job.id} has malformed data`);
        }
        // Every line the handler logs names the job and the rows it concerns.
        const run = () => fairly(data, () => handler(data, job as Job<JobData<Catalog[K]>>, token));
        // A job made under a trace (its payload's traceparent) runs in a span of that trace:
        // what it does, the jobs it adds and the events it emits continue the trace.
        const { traceparent } = data as { traceparent?: string };
        await withLogContext(jobLogFields(def.queue, job.id, data), () =>
          traceparent
            ? inSpan(
                `job ${def.queue}`,
                {
                  kind: SpanKind.CONSUMER,
                  parent: contextFromTraceparent(traceparent),
                  attributes: {
                    'messaging.system': 'bullmq',
                    'messaging.destination.name': def.queue,
                    'messaging.message.id': job.id ?? '',
                  },
                },
                run,
              )
            : run(),
        );
      },
      {
        connection,
        prefix: deps.config.queuePrefix,
        concurrency: opts.concurrency,
        lockDuration: opts.lockDurationMs ?? def.timings.lockDurationMs,
        stalledInterval: opts.stalledIntervalMs ?? def.timings.stalledIntervalMs,
        maxStalledCount: 10,
      },
    ),
    (err) => deps.logger.debug({ err, queue: def.queue }, 'start failed after close; dropped'),
  );
  worker.on('error', (err) => deps.logger.warn({ err, queue: def.queue }, 'queue worker error'));
  worker.on('failed', (job, err) => {
    if (err instanceof UnrecoverableError) return; // logged where it was thrown
    deps.logger.warn({ err, queue: def.queue, jobId: job?.id }, 'job failed; BullMQ will retry');
  });
  return {
    name: def.queue,
    async close() {
      await worker.close();
      await closeRedis(connection);
    },
  };
}
