import type { ChaosPart } from '../part';
import { intEnv } from '../harness/env';
import { runOutage } from '../harness/outage';

/** Postgres (the private cluster) away for CHAOS_OUTAGE_S (default 20) seconds under load. */
export const postgresOutagePart: ChaosPart = {
  description: 'Postgres stopped 20 s under load: fast 503s, recovery, the worker resumes',
  run: ({ log }) =>
    runOutage({ backend: 'postgres', outageMs: intEnv('CHAOS_OUTAGE_S', 20) * 1000, log }),
};
