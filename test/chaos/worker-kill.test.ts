import { runWorkerKill } from '../../chaos/parts/worker-kill';

// The worker-kill part of `npm run chaos` (docs/RELIABILITY.md), reduced: 200 deliveries,
// two SIGKILLs, a short attempt timeout so that a dead worker's slots free themselves fast.
it('a worker SIGKILLed during deliveries loses nothing and duplicates only what was in flight', async () => {
  const result = await runWorkerKill({
    events: 200,
    kills: 2,
    webhookTimeoutMs: 2000,
    log: (l) => process.env.CHAOS_LOG && process.stderr.write(`${l}\n`),
  });
  expect(result.problems).toEqual([]);
}, 150_000);
