import { runOutage } from '../../chaos/harness/outage';

// The redis-outage and postgres-outage parts of `npm run chaos` (docs/RELIABILITY.md) with
// 3-second outages: fast 503s (never a 500 or a hang), what needs no such server goes on,
// recovery within 5 s of its return, every acked event delivered.
const log = () => {};

it('Redis stopped under load', async () => {
  const result = await runOutage({ backend: 'redis', outageMs: 3000, log });
  expect(result.problems).toEqual([]);
}, 90_000);

it('Postgres stopped under load', async () => {
  const result = await runOutage({ backend: 'postgres', outageMs: 3000, log });
  expect(result.problems).toEqual([]);
}, 90_000);
