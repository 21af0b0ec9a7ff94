import type { Queue } from 'bullmq';
import type { Redis } from './connection';

/**
 * Groups that take turns in one queue (docs/decisions/0045-tenants-take-turns.md), with
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
 *
 * The scripts are defined commands of the connection (EVALSHA: the script text is sent once
 * per connection, not with every call). Starts and re-queues change the counts by one each
 * and answer nothing a job needs, so a process sends them together: every change made in
 * one turn of the event loop goes in one call, in the order made (`FairCounts`).
 */

/** BullMQ's largest priority. */
export const MAX_PRIORITY = 2_097_152 - 1;

/** KEYS: hash. ARGV: group... Adds one to each group's count; returns the counts reached. */
const ADD = `
local out = {}
for i = 1, #ARGV do out[i] = redis.call('HINCRBY', KEYS[1], ARGV[i], 1) end
return out`;

/**
 * KEYS: hash. ARGV: group, delta, group, delta... Applies each change in turn; a count that
 * reaches 0 or less is removed (never below 0).
 */
const CHANGE = `
for i = 1, #ARGV, 2 do
  local n = redis.call('HINCRBY', KEYS[1], ARGV[i], tonumber(ARGV[i + 1]))
  if n <= 0 then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return 0`;

type Script = (...args: Array<string | number>) => Promise<unknown>;

/** The script as a defined command of `client` (defined once per connection). */
function script(client: Redis, name: string, lua: string): Script {
  if (!(name in client)) client.defineCommand(name, { numberOfKeys: 1, lua });
  const fn = (client as unknown as Record<string, Script>)[name] as Script;
  return (...args) => fn.apply(client, args);
}

const fairKey = (queue: Queue): string => queue.toKey('fair');
/** The queue's own connection (an ioredis client: BullMQ types it more narrowly). */
const clientOf = async (queue: Queue): Promise<Redis> => (await queue.client) as unknown as Redis;

/** The priorities of jobs about to be added for `groups` (one per job, in order). */
export async function fairPriorities(queue: Queue, groups: readonly string[]): Promise<number[]> {
  if (groups.length === 0) return [];
  const add = script(await clientOf(queue), 'sbFairAdd', ADD);
  const counts = (await add(fairKey(queue), ...groups)) as number[];
  return counts.map((n) => Math.min(MAX_PRIORITY, Math.max(1, n)));
}

/**
 * The count changes of one queue made by this process (a job started: -1; went back to
 * delayed: +1), sent in one call per turn of the event loop. Each change's promise settles
 * when its call does. Calls go out in order on one connection, so changes apply in the order
 * they were made.
 */
export class FairCounts {
  private pending: Array<{ group: string; delta: number }> = [];
  private waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];

  constructor(private readonly queue: Queue) {}

  /** A job of `group` started: its count goes down. */
  started(group: string): Promise<void> {
    return this.change(group, -1);
  }

  /** A job of `group` went back to delayed: its count goes up again. */
  requeued(group: string): Promise<void> {
    return this.change(group, 1);
  }

  private change(group: string, delta: number): Promise<void> {
    if (this.pending.length === 0) setImmediate(() => void this.flush());
    this.pending.push({ group, delta });
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private async flush(): Promise<void> {
    const changes = this.pending;
    const waiters = this.waiters;
    this.pending = [];
    this.waiters = [];
    // Changes of one group in one turn add up (a start and a re-queue cancel out).
    const net = new Map<string, number>();
    for (const c of changes) net.set(c.group, (net.get(c.group) ?? 0) + c.delta);
    const args = [...net].filter(([, d]) => d !== 0).flatMap(([g, d]) => [g, d]);
    try {
      if (args.length > 0) {
        const change = script(await clientOf(this.queue), 'sbFairChange', CHANGE);
        await change(fairKey(this.queue), ...args);
      }
      for (const w of waiters) w.resolve();
    } catch (err) {
      for (const w of waiters) w.reject(err);
    }
  }
}

/** Clears the counts when the queue holds no job at all (drift cannot outlive a quiet moment). */
export async function resetIfIdle(queue: Queue): Promise<void> {
  const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active', 'paused');
  if (Object.values(counts).some((n) => n > 0)) return;
  const client = await clientOf(queue);
  await client.del(fairKey(queue));
}
