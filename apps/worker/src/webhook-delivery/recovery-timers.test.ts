import { loadConfigFor } from '@switchboard/config';
import { catalog } from '@switchboard/queues';
import { CLAIM_MARGIN_MS } from './deliver';
import { LAPSE_CHECK_MS } from './reconciler';

// What a SIGKILLed worker had in flight comes back by timers (docs/RELIABILITY.md, "Crash
// recovery, timer by timer"): within 15 s with the defaults, plus taking the job and the
// send. These are the timers themselves, so the window holds on a machine of any speed;
// test/worker/sigkill-recovery.test.ts shows the recovery happens, and measures it against
// the window (a process start included) in `npm run chaos:quick`.
const WINDOW_MS = 15_000;
/** Taking the job, the claim and the send: about a second under a load average of 20. */
const ROOM_FOR_THE_WORK_MS = 1_000;

const defaults = loadConfigFor('worker', {
  SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
});

it('a claimed attempt of a dead worker is looked for again within the window', () => {
  const lapse = defaults.webhook.timeoutMs + CLAIM_MARGIN_MS + LAPSE_CHECK_MS;
  expect(lapse + ROOM_FOR_THE_WORK_MS).toBeLessThanOrEqual(WINDOW_MS);
});

it("a dead worker's delivery jobs are back within the window", () => {
  const { lockDurationMs, stalledIntervalMs } = catalog.deliveries.timings;
  expect(lockDurationMs + stalledIntervalMs + ROOM_FOR_THE_WORK_MS).toBeLessThanOrEqual(WINDOW_MS);
});
