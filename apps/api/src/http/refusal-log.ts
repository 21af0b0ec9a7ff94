import type { Logger } from '@switchboard/logger';

/** How often the summary of early refusals is written (at info). */
export const REFUSAL_SUMMARY_MS = 10_000;
/** Addresses counted one by one in a summary; the requests of more count in the total only. */
const ADDRESSES_MAX = 1_000;
/** How many of the busiest addresses a summary names. */
const BUSIEST = 5;

/**
 * The log of requests refused early (./early-refusal.ts), at a cost that does not grow with
 * a flood: no access-log line per refusal (a flood would write thousands a second) but one
 * `requests refused early` line every REFUSAL_SUMMARY_MS while there were any: how many,
 * from how many addresses, and the busiest addresses with their counts (what a rule in the
 * packet filter or the load balancer needs; docs/OPERATIONS.md, Logs). Each refusal is also
 * counted in the request metrics. Close writes what is still counted.
 *
 * Invariant: `byAddress` holds at most ADDRESSES_MAX addresses, and `refused` is at least
 * the sum of its counts.
 */
export class RefusalLog {
  private refused = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly logger: Logger,
    intervalMs = REFUSAL_SUMMARY_MS,
  ) {
    this.timer = setInterval(() => this.flush(), intervalMs).unref();
  }

  /** Counts one request of `address` refused early. */
  count(address: string): void {
    this.refused++;
    const seen = this.byAddress.get(address);
    if (seen !== undefined) this.byAddress.set(address, seen + 1);
    else if (this.byAddress.size < ADDRESSES_MAX) this.byAddress.set(address, 1);
  }

  /** Writes the counts since the last line, if there were any. */
  flush(): void {
    if (this.refused === 0) return;
    const busiest = [...this.byAddress]
      .sort((a, b) => b[1] - a[1])
      .slice(0, BUSIEST)
      .map(([address, refused]) => ({ address, refused }));
    this.logger.info(
      { refused: this.refused, addresses: this.byAddress.size, busiest },
      'requests refused early',
    );
    this.refused = 0;
    this.byAddress.clear();
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
