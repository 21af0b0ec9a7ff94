import type { ChaosPart } from '../part';
import { intEnv } from '../harness/env';
import { runOutage } from '../harness/outage';

/** Redis (the private one) away for CHAOS_OUTAGE_S (default 20) seconds under load. */
export const redisOutagePart: ChaosPart = {
  description: 'Redis stopped 20 s under load: fast 503s, reads and ingestion go on, nothing lost',
  run: ({ log }) =>
    runOutage({ backend: 'redis', outageMs: intEnv('CHAOS_OUTAGE_S', 20) * 1000, log }),
};

/**
 * Redis frozen (SIGSTOP) for CHAOS_OUTAGE_S seconds under load: it holds every connection and
 * answers nothing, so only the API's own deadlines bound a request. Every answer within 1 s:
 * keyed writes a 503 with Retry-After, reads and ingestion served.
 */
export const redisFrozenPart: ChaosPart = {
  description: 'Redis frozen (SIGSTOP) 20 s under load: every answer within 1 s, nothing lost',
  run: ({ log }) =>
    runOutage({
      backend: 'redis',
      freeze: true,
      answerWithinMs: 1000,
      outageMs: intEnv('CHAOS_OUTAGE_S', 20) * 1000,
      log,
    }),
};
