import { applyTelephonyMessage, type TelephonyMessage } from '@switchboard/telephony';
import type { WorkerDeps } from '../deps';
import { untilCommitted } from '../until-committed';

/**
 * Applies a telephony message from the worker, durably (the pool's default), and retries it
 * through a Postgres outage until it commits: a call's state and its outbox events are facts
 * reported by the phone side, and a report that gave up would strand the call in progress.
 * Repeating a message is harmless: its id is recorded with it, so a second apply (e.g. after
 * a commit whose acknowledgement was lost) is a no-op.
 */
export async function reportUntilCommitted(
  deps: WorkerDeps,
  message: TelephonyMessage,
): Promise<void> {
  await untilCommitted(deps.logger, `telephony report ${message.type}`, () =>
    applyTelephonyMessage(deps, message),
  );
}
