import type { Queue } from 'bullmq';
import type { Redis } from '@switchboard/queues';

/** At most this many jobs are looked at per call: each costs a few Redis round trips. */
const MAX_CHECKED = 100;

/**
 * Frees jobs stuck in `active` with no lock: their worker died (a SIGKILL) after taking them.
 * BullMQ would move them back to wait at its next stalled check; the reconcilers call this
 * for rows they found overdue, so that the job can be added again at once under the same id
 * (re-adding a job that still exists is a no-op). A job whose lock is held (a live worker
 * runs it) is left alone; removal itself refuses a locked job, so a worker that takes the
 * lock meanwhile is never robbed. Returns the ids that are now free to be added.
 */
export async function freeStuckJobs(
  redis: Redis,
  queue: Queue,
  ids: readonly string[],
): Promise<Set<string>> {
  const freed = new Set<string>();
  for (const id of ids.slice(0, MAX_CHECKED)) {
    // The lock first, then the state: a live worker's job is locked from the moment it is
    // active until it is finished (both in one script each), so no lock and then `active`
    // means a dead worker's, or one taken since (locked: removal refuses it). The other
    // order took a job that finished between the two looks for a dead worker's.
    if ((await redis.exists(`${queue.toKey(id)}:lock`)) === 1) continue;
    if ((await queue.getJobState(id)) !== 'active') continue;
    if ((await queue.remove(id)) === 1) freed.add(id);
  }
  return freed;
}
