import type { Logger } from '@switchboard/logger';
import type { Component } from '../component';

/** How often the summary of successful attempts is written (at info). */
export const ATTEMPT_SUMMARY_MS = 10_000;

/**
 * The log of delivery attempts at info level, at a cost that does not grow with the rate.
 * An attempt that did not succeed (a retry, a failure) is one line of its own, with its
 * delivery, event, status code and error: what an operator looks for. A success is counted,
 * and the counts go out as one `delivery attempts` line every ATTEMPT_SUMMARY_MS (successes,
 * their mean and slowest duration, per outcome); at debug each success is a line of its own
 * as well (docs/OPERATIONS.md, Logs). Close writes what is still counted.
 */
export class AttemptLog implements Component {
  readonly name = 'delivery-attempt-log';
  private succeeded = 0;
  private totalMs = 0;
  private maxMs = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly logger: Logger,
    intervalMs = ATTEMPT_SUMMARY_MS,
  ) {
    this.timer = setInterval(() => this.flush(), intervalMs).unref();
  }

  /** Counts a successful attempt (and logs it at debug). */
  success(fields: () => Record<string, unknown>, ms: number): void {
    this.succeeded++;
    this.totalMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
    if (this.logger.isLevelEnabled('debug')) this.logger.debug(fields(), 'delivery attempt');
  }

  /** Writes the counts since the last line, if there were any. */
  flush(): void {
    if (this.succeeded === 0) return;
    this.logger.info(
      {
        succeeded: this.succeeded,
        meanMs: Math.round(this.totalMs / this.succeeded),
        maxMs: this.maxMs,
      },
      'delivery attempts',
    );
    this.succeeded = 0;
    this.totalMs = 0;
    this.maxMs = 0;
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    this.flush();
    return Promise.resolve();
  }
}
