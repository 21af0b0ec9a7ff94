import type { Redis } from '@switchboard/queues';

/**
 * Per-subscription throttling (`rate_limit_per_second`), shared by every worker through
 * Redis: GCRA (the generic cell rate algorithm, a token bucket kept as one timestamp) with
 * reservations. An attempt to a throttled subscription asks for the next slot of its
 * schedule: a slot that is due now is used at once; a later one is reserved for that
 * attempt (keyed by delivery, round and attempt), which waits for it (a delayed job, holding
 * no worker slot) and, asking again then, is let go. Asking again early (a job re-added or
 * promoted before its time) gets the same slot, never a new one. So a burst of N deliveries
 * goes out at the configured rate in the order it asked, and waiting is not an attempt made
 * (nothing is sent or counted, docs/API.md).
 *
 * Burst: a tenth of a second's worth of attempts may go at once (at least one), so events
 * that arrive together under the rate are not spread out; over any span the attempts are
 * at most `rate × span + burst`.
 */
export interface Reservation {
  waitMs: number;
  fresh: boolean;
}

export interface Throttle {
  /**
   * The slot of attempt `attempt` (`<delivery id>/<round>/<attempt>`) to the subscription
   * limited to `perSecond`: `waitMs` 0 when it may go now, else how long it must wait (its
   * slot is kept for it); `fresh` when that slot was reserved by this call (not on an
   * earlier ask of the same attempt).
   */
  reserve(subscriptionId: string, attempt: string, perSecond: number): Promise<Reservation>;
  /**
   * Gives up the slot kept for `attempt`, if any: it was not made at its slot (its
   * subscription is paused), and asks anew when it comes back, so that a long pause does
   * not end in a burst of slots long past.
   */
  forget(subscriptionId: string, attempt: string): Promise<void>;
}

/** The burst a limit allows: a tenth of a second's worth, at least one attempt. */
export function burstOf(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond / 10));
}

// Redis data, under the deployment's prefix (so under its hash tag, one cluster slot):
//   throttle:tat:<subscription id>  the theoretical arrival time (TAT, ms, Redis clock) of
//     the subscription's next slot; it expires once it is in the past;
//   throttle:held:<subscription id>  HASH attempt → its reserved slot (ms); a field is
//     dropped when its attempt goes, the hash expires a minute after its last slot.
/**
 * KEYS: tat, held. ARGV: emission interval ms, burst, attempt. Returns {wait ms, fresh}.
 * A slot due within SLACK_MS counts as due (timers fire a little early or late); one past
 * by more than STALE_MS is given up and the attempt asks anew (it waited elsewhere: held
 * slots long past must not all go at once).
 */
const RESERVE = `
local SLACK_MS = 5
local STALE_MS = 60000
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local held = redis.call('HGET', KEYS[2], ARGV[3])
if held then
  local wait = tonumber(held) - now
  if wait > SLACK_MS then return {math.ceil(wait), 0} end
  redis.call('HDEL', KEYS[2], ARGV[3])
  if wait >= -STALE_MS then return {0, 0} end
end
local interval = tonumber(ARGV[1])
local tolerance = interval * (tonumber(ARGV[2]) - 1)
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local next_tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.3f', next_tat), 'PX', math.ceil(next_tat - now) + 1000)
local slot = tat - tolerance
if slot - now <= SLACK_MS then return {0, 1} end
redis.call('HSET', KEYS[2], ARGV[3], string.format('%.3f', slot))
local ttl = math.ceil(slot - now) + 60000
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
return {math.ceil(slot - now), 1}`;

type Script = (
  tat: string,
  held: string,
  interval: number,
  burst: number,
  attempt: string,
) => Promise<[number, number]>;

export function createThrottle(redis: Redis, prefix: string): Throttle {
  const name = 'sbThrottleReserve';
  if (!(name in redis)) redis.defineCommand(name, { numberOfKeys: 2, lua: RESERVE });
  const script = (redis as unknown as Record<string, Script>)[name] as Script;
  return {
    async reserve(subscriptionId, attempt, perSecond) {
      const [waitMs, fresh] = await script.call(
        redis,
        `${prefix}:throttle:tat:${subscriptionId}`,
        `${prefix}:throttle:held:${subscriptionId}`,
        1000 / perSecond,
        burstOf(perSecond),
        attempt,
      );
      return { waitMs, fresh: fresh === 1 };
    },
    async forget(subscriptionId, attempt) {
      await redis.hdel(`${prefix}:throttle:held:${subscriptionId}`, attempt);
    },
  };
}
