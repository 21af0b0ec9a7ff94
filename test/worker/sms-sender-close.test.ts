import { startSmsSender } from '../../apps/worker/src/sms';
import { quietWorkerFile } from '../support/worker-deps';

// A worker's components close side by side: a campaign's pump can offer its last message to
// the SMS sender after the sender's close began. That send must go to its job, not start in a
// process whose connections close next (it was cut off mid-send and stayed `sending` until
// the reconciler failed it as interrupted).
const w = quietWorkerFile();

test('a send offered once close began is left to its job', async () => {
  const sender = startSmsSender(w.deps);
  const closed = sender.close();
  expect(sender.trySendNow('sms_offered_while_closing')).toBe(false);
  await closed;
});

test('a send offered before close is taken in process', async () => {
  const sender = startSmsSender(w.deps);
  // No such message: the send finds nothing to claim and ends; close waits for it.
  expect(sender.trySendNow('sms_offered_before_closing')).toBe(true);
  await sender.close();
});
