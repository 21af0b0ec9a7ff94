/**
 * A token bucket as rate-limiter-flexible's `customIncrTtlLuaScript` (its documented hook for
 * replacing the script RateLimiterRedis runs on every consume). The library's own script is a
 * fixed window; this one keeps a real bucket in one key: "<tokens in use> <µs>", the tokens
 * spent and not yet refilled, as of an instant on the Redis clock (so every API process
 * shares one clock). Tokens refill continuously at capacity ÷ duration a second. A request
 * spends one token, or is refused, and nothing is written, when the bucket has none left.
 *
 * The state is counted in tokens, not in time, so a bucket outlives a change of its size:
 * the tokens in use carry over to the new capacity (a key that spent 3 of a 3-token bucket
 * has 197 of a 200-token one left), capped at the new capacity (a key that spent 50 tokens
 * and is cut to 3 has an empty bucket, not 47 tokens of debt).
 *
 * The library calls it with KEYS[1] = `${keyPrefix}:${key}` and ARGV = [points to consume,
 * whole seconds of the duration, points, duration]; here `points` is the bucket's capacity
 * and `duration` the seconds an empty bucket takes to refill (capacity ÷ rate). It must
 * answer {consumed, ttl ms}; the library refuses when consumed > points and reports
 * remaining = points − consumed and msBeforeNext = ttl. So:
 * - allowed: consumed = tokens in use, rounded up (remaining = whole tokens left), and ttl =
 *   ms until the bucket is full again (the key expires then: a full bucket is no key);
 * - refused: consumed = capacity + n (more than the capacity), and ttl = ms until the
 *   request would fit (its Retry-After).
 *
 * One key, under the caller's hash-tagged prefix: legal on a Redis Cluster. Redis replicates
 * a script's effects (the default since Redis 5), so reading TIME before a write is allowed.
 * Every RateLimiterRedis on one connection must run this same script: the library defines it
 * on the client under one fixed command name.
 */
export const TOKEN_BUCKET_LUA = `
local n = tonumber(ARGV[1])
local capacity = tonumber(ARGV[3])
local interval = tonumber(ARGV[4]) * 1000000 / capacity
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local used = 0
local state = redis.call('GET', KEYS[1])
if state then
  local u, at = string.match(state, '^(%S+) (%S+)$')
  if u and at then
    used = math.max(0, tonumber(u) - math.max(0, now - tonumber(at)) / interval)
  end
end
if used > capacity then used = capacity end
if used + n > capacity + 0.000001 then
  return {capacity + n, math.max(1, math.ceil((used + n - capacity) * interval / 1000))}
end
used = used + n
local ttl = math.max(1, math.ceil(used * interval / 1000))
redis.call('SET', KEYS[1], string.format('%.6f %.0f', used, now), 'PX', ttl)
return {math.ceil(used - 0.000001), ttl}
`;
