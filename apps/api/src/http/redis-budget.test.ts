import { REQUEST_REDIS_TIMEOUT_MS } from '@switchboard/queues';
import { REDIS_DEADLINE_MS } from './rate-limit';

// While Redis is frozen (it holds the connection and never answers), a keyed write waits for
// the rate limiter's deadline and then for the idempotency claim's command timeout, one
// after the other. Both are chosen so that the answer (a 503 with Retry-After) comes within
// 1 s, with room left for Postgres and the response itself.
it('the limiter deadline and the command timeout leave a keyed write within 1 s', () => {
  const ROOM_FOR_THE_REST_MS = 200;
  expect(REDIS_DEADLINE_MS + REQUEST_REDIS_TIMEOUT_MS + ROOM_FOR_THE_REST_MS).toBeLessThanOrEqual(
    1000,
  );
  // The limiter must give up before the command does, or it would never decide locally.
  expect(REDIS_DEADLINE_MS).toBeLessThan(REQUEST_REDIS_TIMEOUT_MS);
});
