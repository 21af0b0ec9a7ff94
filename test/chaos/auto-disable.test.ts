import { runAutoDisable } from '../../chaos/parts/auto-disable';

// The auto-disable part of `npm run chaos` (docs/RELIABILITY.md), reduced to one
// subscription: disabled by its failures while attempts are on the wire, every delivery's
// `attempts` equals its attempt rows and the POSTs its receiver got.
it('counts every attempt on the wire at an auto-disable, once, on its delivery', async () => {
  const result = await runAutoDisable({
    trials: 1,
    events: 60,
    log: (l) => process.env.CHAOS_LOG && process.stderr.write(`${l}\n`),
  });
  expect(result.problems).toEqual([]);
}, 180_000);
