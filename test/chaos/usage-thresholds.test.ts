import { runUsageThresholds } from '../../chaos/parts/usage-thresholds';

// The usage-thresholds part of `npm run chaos` (docs/RELIABILITY.md), reduced: 4 tenants'
// call ends racing through two API processes; each threshold fires once per tenant.
it('fires each usage threshold exactly once per tenant under concurrent call ends', async () => {
  const result = await runUsageThresholds({
    tenants: 4,
    calls: 50,
    log: (l) => process.env.CHAOS_LOG && process.stderr.write(`${l}\n`),
  });
  expect(result.problems).toEqual([]);
}, 180_000);
