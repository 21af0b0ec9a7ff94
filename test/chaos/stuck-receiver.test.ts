import { runStuckReceiver } from '../../chaos/parts/stuck-receiver';

// The stuck-receiver part of `npm run chaos` (docs/RELIABILITY.md), reduced: 60 events per
// tenant over 5 s with a 2-second attempt timeout, so dead attempts time out and retry.
it('a receiver that never answers holds only its own deliveries', async () => {
  const result = await runStuckReceiver({
    events: 60,
    spreadMs: 5000,
    timeoutMs: 2000,
    log: () => {},
  });
  expect(result.problems).toEqual([]);
}, 90_000);
