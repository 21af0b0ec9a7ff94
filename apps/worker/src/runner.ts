import type { WorkerDeps } from './deps';

/** Something the worker runs and must stop on shutdown (a BullMQ worker, a timer loop...). */
export interface Component {
  name: string;
  /** Stops taking new work and waits for in-flight work to finish. */
  close(): Promise<void>;
}

export interface Runner {
  close(deadlineMs: number): Promise<'drained' | 'deadline'>;
}

/**
 * Starts every processor of the worker. Draining stops new work and waits for jobs in
 * flight; a job cut off by the deadline stays in BullMQ's active list and is recovered as
 * stalled by another worker, so nothing is lost.
 */
export async function startRunner(deps: WorkerDeps): Promise<Runner> {
  const components: Component[] = [];
  await deps.redis.ping();
  deps.logger.info(
    { queuePrefix: deps.config.queuePrefix, concurrency: deps.config.workerConcurrency },
    'worker ready',
  );
  return {
    async close(deadlineMs) {
      const drained = Promise.all(components.map((c) => c.close())).then(() => 'drained' as const);
      const deadline = new Promise<'deadline'>((resolve) =>
        setTimeout(() => resolve('deadline'), deadlineMs).unref(),
      );
      return Promise.race([drained, deadline]);
    },
  };
}
