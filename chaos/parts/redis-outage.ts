import type { ChaosPart } from '../part';
import { intEnv } from '../harness/env';
import { runOutage } from '../harness/outage';

/** Redis (the private one) away for CHAOS_OUTAGE_S (default 20) seconds under load. */
export const redisOutagePart: ChaosPart = {
  description: 'Redis stopped 20 s under load: fast 503s, reads and ingestion go on, nothing lost',
  run: ({ log }) =>
    runOutage({ backend: 'redis', outageMs: intEnv('CHAOS_OUTAGE_S', 20) * 1000, log }),
};
