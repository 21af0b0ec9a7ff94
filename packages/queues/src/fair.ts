import type { Queue } from 'bullmq';
import type { Redis } from './connection';

/**
 * Groups that take turns in one queue (docs/DECISIONS.md, Fairness between tenants), with
 * BullMQ's own priorities: each group (a tenant) counts its jobs in the queue (added or put
 * back to delayed, and not started since), and a job is added with priority = its group's
 * count including itself. The k-th queued job of every group thus shares rank k: a tenant
 * with 6,000 queued jobs (parked, re-woken, retries of a hung endpoint) has them at ranks 1
 * to 6,000, and another tenant's one new job, at rank 1, runs before all but the first of
 * them. Within a group the order stays the order of adding.
 *
 * The counts live in one hash per queue, `<prefix>:<queue>:fair`. A count that drifts (an
 * add that was a no-op because the job existed, a job retried by BullMQ after a failure) is
 * bounded below by 0 and the hash is cleared whenever the queue is empty (`resetIfIdle`).
 */

/** BullMQ's largest priority. */
export const MAX_PRIORITY = 2_097_152 - 1;

/** KEYS: hash. ARGV: group... Adds one to each group's count; returns the counts reached. */
const ADD = `
local out = {}
for i = 1, #ARGV do out[i] = redis.call('HINCRBY', KEYS[1], ARGV[i], 1) end
return out`;

/** KEYS: hash. ARGV: group. Takes one off the group's count, never below 0. */
const TAKE = `
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if n <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
return n`;

const fairKey = (queue: Queue): string => queue.toKey('fair');
/** The queue's own connection (an ioredis client: BullMQ types it more narrowly). */
const clientOf = async (queue: Queue): Promise<Redis> => (await queue.client) as unknown as Redis;

/** The priorities of jobs about to be added for `groups` (one per job, in order). */
export async function fairPriorities(queue: Queue, groups: readonly string[]): Promise<number[]> {
  if (groups.length === 0) return [];
  const client = await clientOf(queue);
  const counts = (await client.eval(ADD, 1, fairKey(queue), ...groups)) as number[];
  return counts.map((n) => Math.min(MAX_PRIORITY, Math.max(1, n)));
}

/** A job of `group` started (its count goes down) or went back to delayed (up again). */
export async function fairStarted(queue: Queue, group: string): Promise<void> {
  const client = await clientOf(queue);
  await client.eval(TAKE, 1, fairKey(queue), group);
}

export async function fairRequeued(queue: Queue, group: string): Promise<void> {
  await fairPriorities(queue, [group]);
}

/** Clears the counts when the queue holds no job at all (drift cannot outlive a quiet moment). */
export async function resetIfIdle(queue: Queue): Promise<void> {
  const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active', 'paused');
  if (Object.values(counts).some((n) => n > 0)) return;
  const client = await clientOf(queue);
  await client.del(fairKey(queue));
}
