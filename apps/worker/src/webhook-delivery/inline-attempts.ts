/**
 * How long a first attempt's POST makes room scarce for the relay: past this, its receiver
 * is slow or hung (a healthy one answers well within it), and other subscriptions' events
 * must not wait for it to time out. Its unit stays taken, and its lanes still hold it (the
 * in-flight caps stay exact).
 */
export const SLOW_ATTEMPT_MS = 1_000;

/** A unit of the budget, held by one first attempt of `tenantId` since `at` (ms). */
export interface Unit {
  readonly tenantId: string;
  readonly at: number;
}

/**
 * The first attempts the relay's process makes itself (./first-attempts.ts). A unit of the
 * budget is a POST open to a receiver: at most `budget` at once in a process, and at most
 * half of it for one tenant: a tenant whose receivers hang (or whose event fans out to many
 * subscriptions, every unit taken while its lanes are asked) leaves the other half to other
 * tenants' first attempts. The relay claims events only while there is room (`room`,
 * `roomFor`), so the backlog waits in the outbox, where tenants take turns.
 *
 * A unit held longer than SLOW_ATTEMPT_MS no longer makes room scarce: hung receivers (one
 * subscription of a tenant, at its lane's cap, holding as many units as the share; or a few
 * tenants' holding the whole budget) must not keep the relay from taking the events of the
 * other subscriptions and tenants. Their deliveries get a unit if one is free (`take`), else
 * a delivery job, as any first attempt without one; a hung subscription's find its lane full
 * and wait parked.
 *
 * A unit is free again as soon as its POST has its response (`sent`), before the outcome is
 * recorded: the record is a batched statement the receiver does not wait on. At most
 * `budget` attempts wait for their record at once, so a slow Postgres stops the relay's
 * claims instead of piling up outcomes. A worker killed mid-attempt leaves a claimed row
 * whose claim lapses; the reconciler redoes the attempt (same event id). On shutdown, drain()
 * waits for the ones running, records included, once the relay stopped starting new ones.
 */
export class InlineAttempts {
  private readonly running = new Set<Promise<void>>();
  /** Units taken: POSTs open, or about to be. */
  private taken = 0;
  /** Attempts whose POST is over and whose outcome is being recorded. */
  private recording = 0;
  private readonly byTenant = new Map<string, Set<Unit>>();
  /** The units one tenant may hold at once, slow ones aside. */
  readonly share: number;

  constructor(
    private readonly budget: number,
    private readonly now: () => number = Date.now,
  ) {
    this.share = Math.max(1, Math.ceil(budget / 2));
  }

  /** Units that may be taken now: not taken, and records not at their bound. */
  get free(): number {
    return Math.max(0, this.budget - Math.max(this.taken, this.recording));
  }

  /** How many events' deliveries the relay may claim now: units not taken or slow. */
  get room(): number {
    return Math.max(0, this.budget - Math.max(this.inShare(), this.recording));
  }

  /** How many of `tenantId`'s the relay may claim now: `room`, within its share. */
  roomFor(tenantId: string): number {
    return Math.max(0, Math.min(this.room, this.share - this.inShare(tenantId)));
  }

  /** `roomFor` of every tenant holding units; any other's is `min(room, share)`. */
  rooms(): Map<string, number> {
    return new Map([...this.byTenant.keys()].map((t) => [t, this.roomFor(t)]));
  }

  /**
   * Takes one unit of the budget for `tenantId`, or none if there is none free or its
   * share (slow units aside) is in use.
   */
  take(tenantId: string): Unit | undefined {
    if (this.free <= 0 || this.share - this.inShare(tenantId) <= 0) return undefined;
    const unit = { tenantId, at: this.now() };
    this.taken++;
    const mine = this.byTenant.get(tenantId) ?? new Set<Unit>();
    mine.add(unit);
    this.byTenant.set(tenantId, mine);
    return unit;
  }

  /** Gives a unit back (once). */
  untake(unit: Unit): void {
    const mine = this.byTenant.get(unit.tenantId);
    if (!mine?.delete(unit)) return;
    this.taken--;
    if (mine.size === 0) this.byTenant.delete(unit.tenantId);
  }

  /**
   * Runs `attempt` (which holds `unit`; it must not throw) in the background. The unit
   * returns when the attempt calls `sent` (its POST is over, its record to come) or ends,
   * whichever is first; `onFree` runs each time room is made (the unit, then a record's place
   * if records were at their bound). The promise ends with the attempt.
   */
  start(
    unit: Unit,
    attempt: (sent: () => void) => Promise<void>,
    onFree: () => void = () => undefined,
  ): Promise<void> {
    let posting = true;
    const sent = (): void => {
      if (!posting) return;
      posting = false;
      this.untake(unit);
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

  /** The units not yet slow: of `tenantId`, or of every tenant. */
  private inShare(tenantId?: string): number {
    const since = this.now() - SLOW_ATTEMPT_MS;
    let n = 0;
    const sets = tenantId === undefined ? this.byTenant.values() : [this.byTenant.get(tenantId)];
    for (const units of sets) for (const u of units ?? []) if (u.at > since) n++;
    return n;
  }
}
