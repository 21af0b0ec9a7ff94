/**
 * The first attempts the relay's process makes itself (./first-attempts.ts). A unit of the
 * budget is a POST open to a receiver: at most `budget` at once in a process, and at most
 * half of it for one tenant: a tenant whose receivers hang (or whose event fans out to many
 * subscriptions, every unit taken while its lanes are asked) leaves the other half to other
 * tenants' first attempts, which would otherwise fall back to delivery jobs; and the relay,
 * which claims events only while there is room, keeps relaying. A unit is free again as soon
 * as its POST has its response (`sent`), before the outcome is recorded: the record is a
 * batched statement the receiver does not wait on. At most `budget` attempts wait for their
 * record at once, so a slow Postgres stops the relay's claims instead of piling up outcomes.
 * A worker killed mid-attempt leaves a claimed row whose claim lapses; the reconciler redoes
 * the attempt (same event id). On shutdown, drain() waits for the ones running, records
 * included, once the relay stopped starting new ones.
 */
export class InlineAttempts {
  private readonly running = new Set<Promise<void>>();
  /** Units taken: POSTs open, or about to be. */
  private taken = 0;
  /** Attempts whose POST is over and whose outcome is being recorded. */
  private recording = 0;
  private readonly byTenant = new Map<string, number>();
  /** The units one tenant may hold at once. */
  readonly share: number;

  constructor(private readonly budget: number) {
    this.share = Math.max(1, Math.ceil(budget / 2));
  }

  /** Units that may be taken now: not taken, and records not at their bound. */
  get free(): number {
    return Math.max(0, this.budget - Math.max(this.taken, this.recording));
  }

  /** Units `tenantId` could take now. */
  freeFor(tenantId: string): number {
    return Math.min(this.free, this.share - (this.byTenant.get(tenantId) ?? 0));
  }

  /**
   * Takes one unit of the budget for `tenantId`, or says there is none left (for it). Give
   * it back with `untake`.
   */
  take(tenantId: string): boolean {
    const mine = this.byTenant.get(tenantId) ?? 0;
    if (this.free <= 0 || mine >= this.share) return false;
    this.taken++;
    this.byTenant.set(tenantId, mine + 1);
    return true;
  }

  untake(tenantId: string): void {
    this.taken--;
    const mine = (this.byTenant.get(tenantId) ?? 1) - 1;
    if (mine > 0) this.byTenant.set(tenantId, mine);
    else this.byTenant.delete(tenantId);
  }

  /**
   * Runs `attempt` (which holds one taken unit; it must not throw) in the background. The
   * unit returns when the attempt calls `sent` (its POST is over, its record to come) or
   * ends, whichever is first; `onFree` runs each time room is made (the unit, then a record's
   * place if records were at their bound). The promise ends with the attempt.
   */
  start(
    tenantId: string,
    attempt: (sent: () => void) => Promise<void>,
    onFree: () => void = () => undefined,
  ): Promise<void> {
    let posting = true;
    const sent = (): void => {
      if (!posting) return;
      posting = false;
      this.untake(tenantId);
      this.recording++;
      onFree();
    };
    const run = attempt(sent).finally(() => {
      sent();
      const atBound = this.recording >= this.budget;
      this.recording--;
      this.running.delete(run);
      if (atBound) onFree();
    });
    this.running.add(run);
    return run;
  }

  /** Waits for every attempt running; call it after the event worker closed. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
