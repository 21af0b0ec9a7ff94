import { RateLimiter, REDIS_DEADLINE_MS } from '../../apps/api/src/http/rate-limit';
import { createTestContext, type TestContext } from '../support/context';

// A rate limit's Redis deadline judges Redis, not this process: an answer that arrived while
// the process was stalled past the deadline (a loaded machine, a long synchronous task) is
// the decision, not a 503 (docs/decisions/0127-a-deadline-judges-the-server-not-the-stall.md).
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

/** Holds this process's thread for `ms`: nothing else runs meanwhile, timers included. */
const stall = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};

it('a refuse limit takes the answer Redis gave while the process was stalled past the deadline', async () => {
  const limiter = new RateLimiter(ctx.deps.redis, ctx.config.queuePrefix, {
    name: 'stall-test',
    points: 5,
    durationSec: 60,
    message: 'Too many',
    whenRedisFails: 'refuse',
  });
  // The first call loads the bucket's script; the measured one then is a single round trip.
  await expect(limiter.check('key')).resolves.toMatchObject({ allowed: true, remaining: 4 });
  const decision = limiter.check('key');
  // One turn of the event loop: the command is on its way to Redis, the deadline running.
  await new Promise((r) => setImmediate(r));
  // Past the deadline (under the connection's own 2 s command timeout): Redis answers
  // meanwhile, and its answer and the deadline's timer are both ready when the thread is back.
  stall(REDIS_DEADLINE_MS + 200);
  await expect(decision).resolves.toMatchObject({ allowed: true, remaining: 3 });
});
