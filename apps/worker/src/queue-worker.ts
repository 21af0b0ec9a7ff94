import { Worker, type Job } from 'bullmq';
import { closeRedis } from '@switchboard/queues';
import type { Component } from './component';
import type { WorkerDeps } from './deps';

/** BullMQ lock and stalled-check timings; short values make crash recovery fast in tests. */
export interface QueueTimings {
  lockDurationMs?: number;
  stalledIntervalMs?: number;
}

/**
 * A BullMQ worker on its own duplicated connection (blocking commands must not share one),
 * with the production settings: error listeners attached, stalled jobs recovered, and the
 * connection closed with the worker (BullMQ leaves a connection it was handed open).
 */
export function startQueueWorker<T>(
  deps: WorkerDeps,
  queue: string,
  concurrency: number,
  timings: QueueTimings,
  fn: (job: Job<T>) => Promise<void>,
): Component {
  const connection = deps.redis.duplicate();
  const worker = new Worker<T>(queue, fn, {
    connection,
    prefix: deps.config.queuePrefix,
    concurrency,
    lockDuration: timings.lockDurationMs ?? 30_000,
    stalledInterval: timings.stalledIntervalMs ?? 30_000,
    maxStalledCount: 10,
  });
  worker.on('error', (err) => deps.logger.warn({ err, queue }, 'queue worker error'));
  worker.on('failed', (job, err) =>
    deps.logger.warn({ err, queue, jobId: job?.id }, 'job failed; BullMQ will retry'),
  );
  return {
    name: queue,
    async close() {
      await worker.close();
      await closeRedis(connection);
    },
  };
}
