import type { JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/**
 * Adds a job from a request path without ever hanging it. BullMQ waits for a connection
 * that is not ready instead of failing fast, so an outage is recognised up front and the
 * wait is bounded. Rejects when the job could not be added within `ms`; a late success is
 * harmless because job ids are deterministic (re-adding is a no-op).
 */
export async function addWithin<T>(
  queue: Queue<T>,
  connection: Redis,
  job: { name: string; data: T; opts: JobsOptions },
  ms: number,
): Promise<void> {
  if (connection.status !== 'ready') throw new Error(`redis connection is ${connection.status}`);
  // BullMQ's generic name/data typing is looser than T here; the payload type is ours.
  const adding = (queue as unknown as Queue).add(job.name, job.data, job.opts);
  adding.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`job not added within ${ms} ms`)), ms);
    timer.unref();
  });
  try {
    await Promise.race([adding, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
