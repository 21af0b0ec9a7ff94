/**
 * The first attempts the relay's process makes itself (./first-attempts.ts). At most `budget`
 * run at once in a process, and at most half of it for one tenant: a tenant whose receivers
 * hang (or whose event fans out to many subscriptions, every unit taken while its lanes are
 * asked) leaves the other half to other tenants' first attempts, which would otherwise fall
 * back to delivery jobs; and the relay, which claims events only while there is room, keeps
 * relaying. A worker killed mid-attempt leaves a claimed row whose claim lapses; the
 * reconciler redoes the attempt (same event id). On shutdown, drain() waits for the ones
 * running, once the relay stopped starting new ones.
 */
export class InlineAttempts {
  private readonly running = new Set<Promise<void>>();
  private taken = 0;
  private readonly byTenant = new Map<string, number>();
  /** The units one tenant may hold at once. */
  readonly share: number;

  constructor(private readonly budget: number) {
    this.share = Math.max(1, Math.ceil(budget / 2));
  }

  /** Units not taken. */
  get free(): number {
    return this.budget - this.taken;
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
    if (this.taken >= this.budget || mine >= this.share) return false;
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
   * Runs `attempt` (which holds one taken unit; it must not throw) in the background; the
   * unit returns after. The promise ends with the attempt, for a caller that waits a while.
   */
  start(tenantId: string, attempt: () => Promise<void>): Promise<void> {
    const run = attempt().finally(() => {
      this.untake(tenantId);
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
