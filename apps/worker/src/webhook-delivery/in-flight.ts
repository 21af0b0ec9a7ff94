import { Job, type Queue } from 'bullmq';
import { Batcher, oneBatchInFlight } from '@switchboard/db';
import type { Redis } from '@switchboard/queues';

/**
 * The lanes a delivery counts toward: its target (a subscription, or a receptionist's legacy
 * webhook_url) and its tenant. Each lane has a cap on deliveries in flight at once, shared by
 * every worker, so a slow or dead endpoint, or one tenant's many endpoints, hold only their
 * own share of the worker slots.
 */
export interface Lane {
  tenantId: string;
  targetId: string;
}

/** `ok`: a slot is taken in both lanes; otherwise the lane that is full. */
export type Verdict = 'ok' | 'target' | 'tenant';

export interface LaneCaps {
  perTarget: number;
  perTenant: number;
  /** How long a slot is held at most: a crashed worker's slot frees itself then. */
  slotTtlMs: number;
}

// Redis data, under the deployment's prefix (so under its hash tag, one cluster slot):
//   held:<lane>     ZSET holder → expiry (ms, Redis clock): the slots in use;
//   parked:<lane>   LIST of job ids waiting for a slot of that lane (delayed in BullMQ);
//   urgent:<lane>   LIST of job ids of recovered attempts (in flight when their worker died)
//                   waiting for a slot: they are woken before every parked job;
//   reserved:<lane> ZSET job id → expiry: slots kept for urgent jobs just woken, which no
//                   other acquire may take until the job comes for it (or RESERVE_MS passes);
//   waiting         SET of lanes with parked or urgent jobs, for the periodic wake-up.
// A lane is `s:<target id>` or `t:<tenant id>`. Every script cleans expired slots first.
const LUA_FUNCTIONS = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Pops as many waiting jobs as the lane has free slots, urgent ones first (each keeps its
-- slot reserved until it comes to take it): the caller promotes them.
local function settle(held, parked, urgent, reserved, waiting, cap, lane, now, reserve_ms)
  redis.call('ZREMRANGEBYSCORE', held, '-inf', now)
  redis.call('ZREMRANGEBYSCORE', reserved, '-inf', now)
  local free = cap - redis.call('ZCARD', held) - redis.call('ZCARD', reserved)
  local woken = {}
  while free > 0 do
    local id = redis.call('LPOP', urgent)
    if not id then break end
    redis.call('ZADD', reserved, now + reserve_ms, id)
    redis.call('PEXPIRE', reserved, reserve_ms)
    woken[#woken + 1] = id
    free = free - 1
  end
  while free > 0 do
    local id = redis.call('LPOP', parked)
    if not id then break end
    woken[#woken + 1] = id
    free = free - 1
  end
  if redis.call('LLEN', parked) == 0 and redis.call('LLEN', urgent) == 0 then
    redis.call('SREM', waiting, lane)
  end
  return woken
end
`;

/**
 * Several acquires in one call, each exactly as if it ran alone, in order: an item sees the
 * slots every earlier item took, so a batch over a cap grants exactly the free slots, to its
 * first items, and refuses the rest. KEYS: per item, target held, tenant held, target
 * reserved, tenant reserved (keys repeat when items share a lane). ARGV: ttl ms, target cap,
 * tenant cap, then per item its holder and its job id ('' for an inline attempt). A slot
 * reserved for the item's job is its own; one reserved for another job is taken. Returns
 * one verdict per item.
 */
const ACQUIRE = `${LUA_FUNCTIONS}
local now = now_ms()
local ttl = tonumber(ARGV[1])
local caps = { tonumber(ARGV[2]), tonumber(ARGV[3]) }
local cleaned = {}
local function full(held, reserved, cap, job)
  local used = redis.call('ZCARD', held) + redis.call('ZCARD', reserved)
  if job ~= '' and redis.call('ZSCORE', reserved, job) then used = used - 1 end
  return used >= cap
end
local verdicts = {}
for i = 0, #KEYS / 4 - 1 do
  local k = 4 * i
  local holder, job = ARGV[4 + 2 * i], ARGV[5 + 2 * i]
  for j = 1, 4 do
    if not cleaned[KEYS[k + j]] then
      redis.call('ZREMRANGEBYSCORE', KEYS[k + j], '-inf', now)
      cleaned[KEYS[k + j]] = true
    end
  end
  local verdict = 'ok'
  if full(KEYS[k + 1], KEYS[k + 3], caps[1], job) then verdict = 'target'
  elseif full(KEYS[k + 2], KEYS[k + 4], caps[2], job) then verdict = 'tenant'
  else
    if job ~= '' then
      redis.call('ZREM', KEYS[k + 3], job)
      redis.call('ZREM', KEYS[k + 4], job)
    end
    for j = 1, 2 do
      redis.call('ZADD', KEYS[k + j], now + ttl, holder)
      redis.call('PEXPIRE', KEYS[k + j], ttl)
    end
  end
  verdicts[#verdicts + 1] = verdict
end
return verdicts`;

/** KEYS: target held, tenant held. ARGV: target cap, tenant cap. ACQUIRE's verdict, taking nothing. */
const PEEK = `${LUA_FUNCTIONS}
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 'target' end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 'tenant' end
return 'ok'`;

/**
 * KEYS: target held, tenant held. ARGV: holder, ttl ms. Moves the holder's expiry in both
 * lanes to ttl from now, where it still holds a slot. Returns how many lanes it holds.
 */
const RENEW = `${LUA_FUNCTIONS}
local now = now_ms()
local held = 0
for i = 1, 2 do
  if redis.call('ZSCORE', KEYS[i], ARGV[1]) then
    redis.call('ZADD', KEYS[i], 'XX', now + tonumber(ARGV[2]), ARGV[1])
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
    held = held + 1
  end
end
return held`;

/**
 * Several releases in one call, each exactly as if it ran alone, in order: the holder leaves
 * both its lanes, then each lane wakes as many waiting jobs as it has free slots. KEYS:
 * waiting, then per item target held, tenant held, target parked, tenant parked, target
 * urgent, tenant urgent, target reserved, tenant reserved. ARGV: target cap, tenant cap,
 * reserve ms, then per item its holder, target lane, tenant lane. Returns the job ids to wake,
 * of every item.
 */
const RELEASE = `${LUA_FUNCTIONS}
local now = now_ms()
local caps = { tonumber(ARGV[1]), tonumber(ARGV[2]) }
local r = tonumber(ARGV[3])
local woken = {}
for i = 0, (#KEYS - 1) / 8 - 1 do
  local k = 1 + 8 * i
  local a = 4 + 3 * i
  redis.call('ZREM', KEYS[k + 1], ARGV[a])
  redis.call('ZREM', KEYS[k + 2], ARGV[a])
  for j = 1, 2 do
    local ids = settle(KEYS[k + j], KEYS[k + 2 + j], KEYS[k + 4 + j], KEYS[k + 6 + j], KEYS[1],
      caps[j], ARGV[a + j], now, r)
    for _, id in ipairs(ids) do woken[#woken + 1] = id end
  end
end
return woken`;

/**
 * KEYS: held, parked, urgent, reserved, waiting of one lane. ARGV: job id ('' = none), cap,
 * lane, list ttl ms, '1' when the job is urgent, reserve ms. Parks the job (if any), then
 * wakes as many as the lane has room for: a slot freed between the refusal and the parking
 * is not missed. Returns job ids to wake.
 *
 * An urgent job is listed once: listed twice (parked while it waited for a slot, then again
 * when it gave up), its second turn would reserve a slot for a job that already took one,
 * which nobody uses until the reservation lapses. One that parks while a slot is still
 * reserved for it (reserved as it gave up waiting) is woken at once to take it.
 */
const PARK_AND_SETTLE = `${LUA_FUNCTIONS}
local now = now_ms()
local job, urgent = ARGV[1], ARGV[5] == '1'
local kept = false
if job ~= '' and urgent then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  kept = redis.call('ZSCORE', KEYS[4], job) ~= false
end
if job ~= '' and not kept then
  local list = KEYS[2]
  if urgent then
    list = KEYS[3]
    redis.call('LREM', list, 0, job)
  end
  redis.call('RPUSH', list, job)
  redis.call('PEXPIRE', list, ARGV[4])
  redis.call('SADD', KEYS[5], ARGV[3])
end
local woken = settle(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], tonumber(ARGV[2]), ARGV[3], now, tonumber(ARGV[6]))
if kept then woken[#woken + 1] = job end
return woken`;

/**
 * KEYS: per target lane, held, reserved, parked, urgent. ARGV: the target cap. Returns per
 * lane the slots a new attempt may take without going before anyone: the cap less the slots
 * held, those reserved and the jobs waiting for the next ones (at least 0). Takes nothing.
 */
const FREE = `${LUA_FUNCTIONS}
local now = now_ms()
local free = {}
for i = 0, #KEYS / 4 - 1 do
  local k = 4 * i
  redis.call('ZREMRANGEBYSCORE', KEYS[k + 1], '-inf', now)
  redis.call('ZREMRANGEBYSCORE', KEYS[k + 2], '-inf', now)
  local used = redis.call('ZCARD', KEYS[k + 1]) + redis.call('ZCARD', KEYS[k + 2])
    + redis.call('LLEN', KEYS[k + 3]) + redis.call('LLEN', KEYS[k + 4])
  free[#free + 1] = math.max(0, tonumber(ARGV[1]) - used)
end
return free`;

/**
 * How long a slot stays reserved for an urgent job that was woken: long enough for the job to
 * go from delayed to a worker (milliseconds when the queue is not backed up); a job later
 * than this finds its slot given away and parks again.
 */
export const RESERVE_MS = 5_000;

/** How long a parked list lives without a new job (housekeeping only). */
const PARKED_TTL_MS = 24 * 3_600_000;

/**
 * Concurrent acquires (and releases) of one process go to Redis as one script call per batch
 * (group commit, see Batcher): one batch of each in flight, calls made meanwhile wait for it.
 * A failed call is Redis away or slow: every caller of the batch logs it and goes on (a slot
 * expires by itself; parked jobs are woken periodically).
 */
const LANE_BATCH = oneBatchInFlight(100);

/** A target's lane name in Redis (a tenant's is `t:<tenant id>`). */
const targetLane = (targetId: string): string => `s:${targetId}`;

type Script = (...args: Array<string | number>) => Promise<unknown>;

/**
 * `keys`: the script's fixed number of keys, or undefined for a script called with a variable
 * number (the first argument is then that number). Either way every key is in KEYS, so Redis
 * Cluster routes the call by them (they share the deployment's hash tag: one slot).
 */
function defineScript(redis: Redis, name: string, keys: number | undefined, lua: string): Script {
  if (!(name in redis)) {
    redis.defineCommand(name, keys === undefined ? { lua } : { numberOfKeys: keys, lua });
  }
  const fn = (redis as unknown as Record<string, Script>)[name] as Script;
  return (...args) => fn.apply(redis, args);
}

interface AcquireItem {
  lane: Lane;
  holder: string;
  jobId: string;
}
interface ReleaseItem {
  lane: Lane;
  holder: string;
}

/**
 * In-flight caps per target and per tenant, counted in Redis so that every worker shares
 * them. A delivery takes a slot in both lanes before it claims its row and gives it back
 * when the attempt is over, renewing it meanwhile (`hold`); a slot held by a worker that
 * died expires after `slotTtlMs`.
 * A job refused a slot is parked: moved to delayed (so it holds no worker slot) and listed
 * under the full lane; whoever frees a slot of that lane promotes the next parked job, and a
 * periodic `wakeAll` covers slots that expired and wake-ups that were lost.
 */
export class InFlightLanes {
  private readonly acquireScript: Script;
  private readonly releaseScript: Script;
  private readonly parkScript: Script;
  private readonly renewScript: Script;
  private readonly peekScript: Script;
  private readonly freeScript: Script;
  private readonly acquires: Batcher<AcquireItem, Verdict>;
  private readonly releases: Batcher<ReleaseItem, void>;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly queue: Queue,
    private readonly jobName: string,
    private readonly caps: LaneCaps,
  ) {
    this.acquireScript = defineScript(redis, 'sbLaneAcquireBatch', undefined, ACQUIRE);
    this.releaseScript = defineScript(redis, 'sbLaneReleaseBatch', undefined, RELEASE);
    this.parkScript = defineScript(redis, 'sbLanePark', 5, PARK_AND_SETTLE);
    this.renewScript = defineScript(redis, 'sbLaneRenew', 2, RENEW);
    this.peekScript = defineScript(redis, 'sbLanePeek', 2, PEEK);
    this.freeScript = defineScript(redis, 'sbLaneFree', undefined, FREE);
    this.acquires = new Batcher((items) => this.acquireBatch(items), LANE_BATCH);
    this.releases = new Batcher((items) => this.releaseBatch(items), LANE_BATCH);
  }

  private key(kind: 'held' | 'parked' | 'urgent' | 'reserved', lane: string): string {
    return `${this.prefix}:lanes:${kind}:${lane}`;
  }
  private get waitingKey(): string {
    return `${this.prefix}:lanes:waiting`;
  }
  private names(lane: Lane): { target: string; tenant: string } {
    return { target: targetLane(lane.targetId), tenant: `t:${lane.tenantId}` };
  }
  private capOf(name: string): number {
    return name.startsWith('t:') ? this.caps.perTenant : this.caps.perTarget;
  }

  /**
   * Takes a slot in both lanes for `holder` (unique per attempt), or says which is full. A
   * slot reserved for job `jobId` (an urgent job that was woken) is its own; slots reserved
   * for other jobs count as taken. Inline attempts have no job id. Concurrent calls share one
   * script call, which decides them in the order they were made, each as if alone.
   */
  acquire(lane: Lane, holder: string, jobId = ''): Promise<Verdict> {
    return this.acquires.add({ lane, holder, jobId });
  }

  private async acquireBatch(items: AcquireItem[]): Promise<Verdict[]> {
    const keys: string[] = [];
    const args: Array<string | number> = [
      this.caps.slotTtlMs,
      this.caps.perTarget,
      this.caps.perTenant,
    ];
    for (const { lane, holder, jobId } of items) {
      const n = this.names(lane);
      keys.push(
        this.key('held', n.target),
        this.key('held', n.tenant),
        this.key('reserved', n.target),
        this.key('reserved', n.tenant),
      );
      args.push(holder, jobId);
    }
    return (await this.acquireScript(keys.length, ...keys, ...args)) as Verdict[];
  }

  /**
   * Whether `acquire` would take a slot now, taking none: a delivery whose lane is full is
   * added parked (./first-attempts.ts) instead of queued only to be refused.
   */
  async peek(lane: Lane): Promise<Verdict> {
    const n = this.names(lane);
    return (await this.peekScript(
      this.key('held', n.target),
      this.key('held', n.tenant),
      this.caps.perTarget,
      this.caps.perTenant,
    )) as Verdict;
  }

  /**
   * The slots of each target's lane that a new attempt could take now without going before a
   * parked or urgent job, taking none: the relay claims no more than that for a tenant whose
   * target lanes refused it (./full-lanes.ts).
   */
  async free(targetIds: readonly string[]): Promise<number[]> {
    if (targetIds.length === 0) return [];
    const keys = targetIds.flatMap((id) =>
      (['held', 'reserved', 'parked', 'urgent'] as const).map((kind) =>
        this.key(kind, targetLane(id)),
      ),
    );
    return (await this.freeScript(keys.length, ...keys, this.caps.perTarget)) as number[];
  }

  /**
   * Runs `work` (the attempt of a slot `holder` acquired) while renewing the slot every third
   * of its TTL, so that it cannot lapse while the attempt still runs: a slot only expires by
   * itself when its holder died. Without this, an attempt slower than the TTL (a claim that
   * waited, a slow record) let a further attempt take the "freed" slot, one over the cap.
   * A renewal that fails (Redis away) is logged by the caller's `onError` and retried at the
   * next beat. The caller still releases the slot after.
   */
  async hold<T>(
    lane: Lane,
    holder: string,
    work: () => Promise<T>,
    onError: (err: unknown) => void = () => undefined,
  ): Promise<T> {
    const n = this.names(lane);
    const beat = setInterval(
      () => {
        this.renewScript(
          this.key('held', n.target),
          this.key('held', n.tenant),
          holder,
          this.caps.slotTtlMs,
        ).catch(onError);
      },
      Math.max(10, Math.floor(this.caps.slotTtlMs / 3)),
    );
    try {
      return await work();
    } finally {
      clearInterval(beat);
    }
  }

  /**
   * Gives the slot back and wakes the next parked jobs of both lanes; resolves once they are
   * woken. Concurrent calls share one script call.
   */
  release(lane: Lane, holder: string): Promise<void> {
    return this.releases.add({ lane, holder });
  }

  private async releaseBatch(items: ReleaseItem[]): Promise<void[]> {
    const keys: string[] = [this.waitingKey];
    const args: Array<string | number> = [this.caps.perTarget, this.caps.perTenant, RESERVE_MS];
    for (const { lane, holder } of items) {
      const n = this.names(lane);
      for (const kind of ['held', 'parked', 'urgent', 'reserved'] as const) {
        keys.push(this.key(kind, n.target), this.key(kind, n.tenant));
      }
      args.push(holder, n.target, n.tenant);
    }
    const woken = (await this.releaseScript(keys.length, ...keys, ...args)) as string[];
    await this.promote(woken);
    return items.map(() => undefined);
  }

  /**
   * Lists a job that is already delayed under the lane that refused it. An `urgent` job (an
   * attempt that was in flight when its worker died) goes before every parked one and gets
   * the next slot that frees, kept for it until it comes: a recovered attempt waits for one
   * slot, never behind a backlog.
   */
  async park(
    lane: Lane,
    full: Exclude<Verdict, 'ok'>,
    jobId: string,
    urgent = false,
  ): Promise<void> {
    await this.settle(this.names(lane)[full], jobId, urgent);
  }

  /** Wakes parked jobs of every lane that has room (slots expired, wake-ups lost). */
  async wakeAll(): Promise<void> {
    const lanes = await this.redis.smembers(this.waitingKey);
    for (const lane of lanes) await this.settle(lane, '');
  }

  private async settle(lane: string, jobId: string, urgent = false): Promise<void> {
    const woken = (await this.parkScript(
      this.key('held', lane),
      this.key('parked', lane),
      this.key('urgent', lane),
      this.key('reserved', lane),
      this.waitingKey,
      jobId,
      this.capOf(lane),
      lane,
      PARKED_TTL_MS,
      urgent ? '1' : '0',
      RESERVE_MS,
    )) as string[];
    await this.promote(woken);
  }

  /**
   * Moves parked jobs from delayed back to waiting. A job that is no longer delayed (its
   * safety delay ran out, or it was listed twice) is skipped: whoever woke it has it.
   * Promoting needs only the job's id, so the job is not read first.
   */
  private async promote(ids: string[]): Promise<void> {
    await Promise.all(
      ids.map((id) =>
        new Job(this.queue, this.jobName, {}, {}, id).promote().catch(() => undefined),
      ),
    );
  }
}
