import type { ChaosPart } from '../part';
import { apiSigtermPart } from './api-sigterm';
import { autoDisablePart } from './auto-disable';
import { failoverPart } from './failover';
import { fuzzPart } from './fuzz';
import { importKillPart } from './import-kill';
import { postgresOutagePart } from './postgres-outage';
import { redisFrozenPart, redisOutagePart } from './redis-outage';
import { smsFaultsPart } from './sms-faults';
import { stuckReceiverPart } from './stuck-receiver';
import { usageThresholdsPart } from './usage-thresholds';
import { workerKillPart } from './worker-kill';

/**
 * Every part of `npm run chaos`, by name, in the order a full run takes them. A new part
 * (a fault scenario) is one file in this folder and one line here.
 */
export const PARTS: Record<string, ChaosPart> = {
  fuzz: fuzzPart,
  'worker-kill': workerKillPart,
  'redis-outage': redisOutagePart,
  'redis-frozen': redisFrozenPart,
  'postgres-outage': postgresOutagePart,
  'api-sigterm': apiSigtermPart,
  'stuck-receiver': stuckReceiverPart,
  'sms-faults': smsFaultsPart,
  'import-kill': importKillPart,
  'usage-thresholds': usageThresholdsPart,
  'auto-disable': autoDisablePart,
  failover: failoverPart,
};
