/**
 * The first attempts an event's job started. The job waits for them at most
 * INLINE_WAIT_MS (./fan-out.ts), so a receiver that never answers holds its own attempt (and
 * its lane slot) for the HTTP deadline, but an event job slot that other subscriptions'
 * events need for no longer than that.
 *
 * At most `budget` run at once in a process. A worker killed mid-attempt leaves a claimed
 * row whose claim lapses; the reconciler redoes the attempt (same event id). On shutdown,
 * drain() waits for the ones running, once the event worker stopped starting new ones.
 */
export class InlineAttempts {
  private readonly running = new Set<Promise<void>>();
  private taken = 0;

  constructor(private readonly budget: number) {}

  /** Takes one unit of the budget, or says there is none left. Give it back with `untake`. */
  take(): boolean {
    if (this.taken >= this.budget) return false;
    this.taken++;
    return true;
  }

  untake(): void {
    this.taken--;
  }

  /**
   * Runs `attempt` (which holds one taken unit; it must not throw) in the background; the
   * unit returns after. The promise ends with the attempt, for a caller that waits a while.
   */
  start(attempt: () => Promise<void>): Promise<void> {
    const run = attempt().finally(() => {
      this.taken--;
      this.running.delete(run);
    });
    this.running.add(run);
    return run;
  }

  /** Waits for every attempt running; call it after the event worker closed. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
