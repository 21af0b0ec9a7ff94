import { runOutage } from '../../chaos/harness/outage';
import { SLACK_FACTOR } from '../support/timing';

// The redis-outage and postgres-outage parts of `npm run chaos` (docs/RELIABILITY.md) with
// 3-second outages: fast 503s (never a 500 or a hang), what needs no such server goes on,
// recovery soon after its return, every acked event delivered. "Fast" and "soon" are the chaos
// part's bounds plus slack from the answers before the outage (test/support/timing.ts).
const log = () => {};

it('Redis stopped under load', async () => {
  const result = await runOutage({
    backend: 'redis',
    outageMs: 3000,
    slackFactor: SLACK_FACTOR,
    log,
  });
  expect(result.problems).toEqual([]);
}, 90_000);

it('Postgres stopped under load', async () => {
  const result = await runOutage({
    backend: 'postgres',
    outageMs: 3000,
    slackFactor: SLACK_FACTOR,
    log,
  });
  expect(result.problems).toEqual([]);
}, 90_000);
