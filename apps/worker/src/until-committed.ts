import { setTimeout as sleep } from 'node:timers/promises';
import { isTransientDbError } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';

export interface UntilCommittedOptions {
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** After this long the last error is thrown; a reconciler or sweep takes over from there. */
  giveUpAfterMs?: number;
}

/**
 * Runs an idempotent write until it commits. An availability error (Postgres stopped,
 * restarting, a lost connection: `isTransientDbError`) is retried with a capped exponential
 * backoff, for up to `giveUpAfterMs` (30 minutes by default); any other error is thrown at
 * once, because it would fail again. The write must be harmless to repeat: a commit whose
 * acknowledgement was lost with the connection is retried too.
 */
export async function untilCommitted<T>(
  logger: Logger,
  what: string,
  write: () => Promise<T>,
  opts: UntilCommittedOptions = {},
): Promise<T> {
  const giveUpAt = Date.now() + (opts.giveUpAfterMs ?? 30 * 60_000);
  let delay = opts.firstDelayMs ?? 200;
  for (let failures = 1; ; failures++) {
    try {
      return await write();
    } catch (err) {
      if (!isTransientDbError(err) || Date.now() + delay > giveUpAt) throw err;
      if (failures === 1 || failures % 10 === 0) {
        logger.warn({ err, what, failures }, 'Postgres unavailable; retrying until it commits');
      }
      await sleep(delay);
      delay = Math.min(delay * 2, opts.maxDelayMs ?? 5_000);
    }
  }
}
