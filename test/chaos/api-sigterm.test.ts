import { runApiSigterm } from '../../chaos/parts/api-sigterm';

// The api-sigterm part of `npm run chaos` (docs/RELIABILITY.md), reduced to 300 requests.
it('an API SIGTERMed during a burst answers every request it accepted', async () => {
  const result = await runApiSigterm({ requests: 300, concurrency: 16, log: () => {} });
  expect(result.problems).toEqual([]);
}, 90_000);
