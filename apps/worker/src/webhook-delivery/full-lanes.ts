import type { Lane, Verdict } from './in-flight';

/**
 * How long a tenant stays bounded after a lane last refused one of its first attempts here:
 * longer than the relay's fallback poll, so that a process holding none of the lane's slots,
 * woken only by that poll, still finds the tenant bounded.
 */
export const FULL_FOR_MS = 5_000;
/**
 * What a bounded tenant may claim in one batch when its lanes have no room and none of its
 * first attempts waits here for a slot: one delivery, which either keeps the bound (refused,
 * or waiting for this process's next slot) or, going to a lane that did not refuse, lifts
 * it. A tenant whose events moved to another subscription is held behind a full one for a
 * batch, or for as long as an attempt waits for a slot (at most a second: first-attempts.ts).
 */
const PROBE = 1;

interface Seen {
  /** Target id → when its lane last refused a first attempt of the tenant (ms). */
  refused: Map<string, number>;
  /**
   * Target id → when its lane last gave a first attempt of the tenant a slot (ms); noted
   * only while the tenant has a refusal.
   */
  served: Map<string, number>;
}

/**
 * The relay's claims bounded by the lanes' room across workers. Several workers' relays
 * each claim a tenant's events as far as their own budget allows; when the tenant's lanes
 * are full (one busy subscription at its cap, held by another worker's attempts), what one
 * relay claimed beyond them was parked, and each slot given back woke a parked job that took
 * it from the next first attempt, which was parked in turn: the parking cycle, 2.4 rows
 * updated a delivery (docs/benchmarks/delivery.md, "The relay claims what full lanes have
 * room for").
 *
 * So a tenant whose first attempts a lane refused within FULL_FOR_MS is claimed only as far
 * as those lanes have room: their free slots in Redis (InFlightLanes.free: parked jobs go
 * first) and this process's own that a new attempt could soon have (warm, or held by
 * attempts not yet slow, whose refused successors wait for them: decision 0131), less the
 * attempts waiting here; at least PROBE. Not bounded: a tenant one of whose other targets
 * served a first attempt meanwhile (its events go there too: their deliveries to the full
 * lane are parked, as before, rather than holding the others back).
 */
export class FullLanes {
  private readonly tenants = new Map<string, Seen>();

  constructor(
    /** Free slots of each target's lane, across workers (InFlightLanes.free). */
    private readonly free: (targetIds: readonly string[]) => Promise<number[]>,
    /**
     * This process's slots of a tenant's target that a new attempt could soon have, and its
     * first attempts waiting for one (WarmSlots.mine).
     */
    private readonly mine: (
      tenantId: string,
      targetId: string,
    ) => { held: number; waiting: number },
    private readonly forMs = FULL_FOR_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A first attempt of `lane` was refused: its `verdict` lane is full. Only a full target
   * lane bounds its tenant: a full tenant lane is most often the tenant's own hung
   * receivers, whose events the share already paces (decision 0126), and bounding it too
   * made other tenants' deliveries slower beside them (the fairness benchmark's phase b).
   */
  refused(lane: Lane, verdict: Exclude<Verdict, 'ok'>): void {
    if (verdict !== 'target') return;
    this.seen(lane.tenantId).refused.set(lane.targetId, this.now());
  }

  /** A first attempt of `lane` got a slot. */
  served(lane: Lane): void {
    const seen = this.tenants.get(lane.tenantId);
    if (seen) seen.served.set(lane.targetId, this.now());
  }

  /** The most the relay may claim now for each bounded tenant (others are not bounded). */
  async bounds(): Promise<Map<string, number>> {
    const since = this.now() - this.forMs;
    const bounded: Array<[string, string[]]> = [];
    for (const [tenantId, seen] of this.tenants) {
      for (const map of [seen.refused, seen.served])
        for (const [name, at] of map) if (at <= since) map.delete(name);
      if (seen.refused.size === 0) this.tenants.delete(tenantId);
      else if (!this.servedElsewhere(seen)) bounded.push([tenantId, [...seen.refused.keys()]]);
    }
    const bounds = new Map<string, number>();
    if (bounded.length === 0) return bounds;
    const free = await this.free(bounded.flatMap(([, targets]) => targets));
    let i = 0;
    for (const [tenantId, targets] of bounded) {
      let room = 0;
      let waiting = 0;
      for (const targetId of targets) {
        const mine = this.mine(tenantId, targetId);
        room += (free[i++] ?? 0) + mine.held - mine.waiting;
        waiting += mine.waiting;
      }
      bounds.set(tenantId, room > 0 ? room : waiting > 0 ? 0 : PROBE);
    }
    return bounds;
  }

  /** A target lane that served the tenant and did not refuse it. */
  private servedElsewhere(seen: Seen): boolean {
    for (const targetId of seen.served.keys()) if (!seen.refused.has(targetId)) return true;
    return false;
  }

  private seen(tenantId: string): Seen {
    let seen = this.tenants.get(tenantId);
    if (!seen) this.tenants.set(tenantId, (seen = { refused: new Map(), served: new Map() }));
    return seen;
  }
}
