import type { InFlightLanes, Lane, Verdict } from './in-flight';

/** How long a slot a first attempt gave back waits for the next first attempt of its lane. */
export const WARM_IDLE_MS = 10;
/**
 * How long one slot serves first attempts of its lane at most, from when Redis granted it:
 * then it goes back to the lane, whose parked jobs take their turn. Well under a third of a
 * slot's TTL, so a slot handed on still has most of its TTL for the attempt (`hold` renews
 * it from the attempt's start).
 */
export const WARM_MAX_AGE_MS = 1_000;

/** A lane slot as a first attempt holds it: its holder in Redis, and when it was granted. */
export interface HeldSlot {
  holder: string;
  grantedAt: number;
}

interface Warm extends HeldSlot {
  lane: Lane;
  timer: NodeJS.Timeout;
}

/**
 * The lane slots of the relay's first attempts, handed from one first attempt to the next
 * of the same lane in this process instead of given back to Redis and asked again.
 *
 * Why: with one busy subscription, the relay's first attempts keep its lane at the cap. A
 * slot given back wakes a parked job of the lane, which takes it, so the next event's first
 * attempt finds the lane full and is parked in turn: a cycle that kept a fifth of first
 * attempts parked and claimed (docs/benchmarks/delivery.md, One busy subscription at its
 * lane's cap), each release and acquire a lane script besides. A slot handed on stays counted in Redis
 * (the caps hold as before: it is never given to two attempts at once, nor kept past its
 * TTL), and goes back to the lane when no first attempt of its lane takes it within
 * WARM_IDLE_MS or once it has served WARM_MAX_AGE_MS: a lane's parked jobs wait at most
 * about that long for a slot a busy process keeps handing on.
 *
 * Invariant: a slot is either held by one running attempt or warm here, never both; `close`
 * gives every warm slot back.
 */
export class WarmSlots {
  private readonly warm = new Map<string, Warm[]>();
  /** Per lane, the give-backs of this process still on their way to Redis. */
  private readonly givingBack = new Map<string, Promise<unknown>>();
  /**
   * Per lane, the slots this process's attempts hold: holder → since when (ms). With the
   * warm ones, every slot of the lane this process has.
   */
  private readonly busy = new Map<string, Map<string, number>>();
  /** Per lane, first attempts refused by the lane, waiting for a slot of this process. */
  private readonly waiters = new Map<string, Array<(slot: HeldSlot | undefined) => void>>();
  private closed = false;

  constructor(
    private readonly lanes: Pick<InFlightLanes, 'acquire' | 'release'>,
    private readonly onReleaseError: (err: unknown) => void,
    private readonly idleMs = WARM_IDLE_MS,
    private readonly maxAgeMs = WARM_MAX_AGE_MS,
  ) {}

  /**
   * A slot of `lane` for a first attempt: a warm one if this process has one, else one asked
   * of Redis for a new holder, named only then (the verdict says which lane is full).
   */
  async acquire(
    lane: Lane,
    newHolder: () => string,
  ): Promise<{ verdict: 'ok'; slot: HeldSlot } | { verdict: Exclude<Verdict, 'ok'> }> {
    const slot = this.takeWarm(lane);
    if (slot) return { verdict: 'ok', slot: this.lend(lane, slot) };
    // A slot this process is giving back still counts in Redis: asked before it is gone, the
    // lane would look full to this process's own next attempt, which would be parked.
    await this.givingBack.get(laneKey(lane));
    const holder = newHolder();
    const grantedAt = Date.now();
    const verdict = await this.lanes.acquire(lane, holder);
    if (verdict !== 'ok') return { verdict };
    return { verdict, slot: this.lend(lane, { holder, grantedAt }) };
  }

  /** Counts `slot` as held by an attempt of `lane` from now until its release. */
  private lend(lane: Lane, slot: HeldSlot): HeldSlot {
    const key = laneKey(lane);
    const busy = this.busy.get(key) ?? new Map<string, number>();
    busy.set(slot.holder, Date.now());
    this.busy.set(key, busy);
    return slot;
  }

  /** Whether this process holds a slot of `lane` (one of its attempts will free it). */
  holds(lane: Lane): boolean {
    const key = laneKey(lane);
    return this.busy.has(key) || this.warm.has(key);
  }

  /**
   * This process's slots of the target `targetId` of `tenantId` that a new first attempt
   * could soon have (`held`: warm ones, and those held by attempts that began after `since`,
   * whose POSTs are not yet slow), and its first attempts `waiting` for one of them.
   */
  mine(tenantId: string, targetId: string, since: number): { held: number; waiting: number } {
    const key = laneKey({ tenantId, targetId });
    let held = this.warm.get(key)?.length ?? 0;
    for (const at of this.busy.get(key)?.values() ?? []) if (at > since) held++;
    return { held, waiting: this.waiters.get(key)?.length ?? 0 };
  }

  /**
   * The next slot of `lane` one of this process's attempts frees, or undefined after `ms`,
   * on close, or once this process holds none of the lane's slots.
   */
  waitFor(lane: Lane, ms: number): Promise<HeldSlot | undefined> {
    if (this.closed || !this.holds(lane)) return Promise.resolve(undefined);
    const key = laneKey(lane);
    return new Promise((resolve) => {
      const list = this.waiters.get(key) ?? [];
      const done = (slot: HeldSlot | undefined) => {
        clearTimeout(timer);
        resolve(slot);
      };
      const timer = setTimeout(() => {
        const i = list.indexOf(done);
        if (i >= 0) list.splice(i, 1);
        if (list.length === 0 && this.waiters.get(key) === list) this.waiters.delete(key);
        resolve(undefined);
      }, ms);
      list.push(done);
      this.waiters.set(key, list);
    });
  }

  /** The slot's attempt is over: kept warm for the next first attempt of `lane`, or given back. */
  release(lane: Lane, slot: HeldSlot): Promise<void> {
    const busy = this.busy.get(laneKey(lane));
    if (busy?.delete(slot.holder) && busy.size === 0) this.busy.delete(laneKey(lane));
    if (this.closed || Date.now() - slot.grantedAt >= this.maxAgeMs) {
      return this.giveBack(lane, slot.holder);
    }
    const key = laneKey(lane);
    const waiter = this.waiters.get(key)?.shift();
    if (waiter) {
      if (this.waiters.get(key)?.length === 0) this.waiters.delete(key);
      waiter(this.lend(lane, slot));
      return Promise.resolve();
    }
    const list = this.warm.get(key) ?? [];
    const warm: Warm = {
      ...slot,
      lane,
      timer: setTimeout(() => {
        if (this.remove(key, warm)) void this.giveBack(lane, warm.holder);
      }, this.idleMs),
    };
    list.push(warm);
    this.warm.set(key, list);
    return Promise.resolve();
  }

  /** Gives every warm slot back to its lane; later releases go straight back too. */
  async close(): Promise<void> {
    this.closed = true;
    for (const list of this.waiters.values()) for (const w of list) w(undefined);
    this.waiters.clear();
    const warm = [...this.warm.values()].flat();
    this.warm.clear();
    await Promise.all(
      warm.map((w) => {
        clearTimeout(w.timer);
        return this.giveBack(w.lane, w.holder);
      }),
    );
  }

  /** The youngest warm slot of `lane` still young enough to serve, if any. */
  private takeWarm(lane: Lane): HeldSlot | undefined {
    const key = laneKey(lane);
    const list = this.warm.get(key);
    const w = list?.pop();
    if (!w) return undefined;
    if (list?.length === 0) this.warm.delete(key);
    clearTimeout(w.timer);
    if (Date.now() - w.grantedAt >= this.maxAgeMs) {
      void this.giveBack(lane, w.holder);
      return this.takeWarm(lane);
    }
    return { holder: w.holder, grantedAt: w.grantedAt };
  }

  private remove(key: string, warm: Warm): boolean {
    const list = this.warm.get(key);
    const i = list?.indexOf(warm) ?? -1;
    if (!list || i < 0) return false;
    list.splice(i, 1);
    if (list.length === 0) this.warm.delete(key);
    return true;
  }

  private giveBack(lane: Lane, holder: string): Promise<void> {
    const key = laneKey(lane);
    // The slot is out of `busy` and `warm` already. If it was the process's last of the lane,
    // nothing of this process will free one: its waiters go on without.
    if (!this.holds(lane)) {
      for (const w of this.waiters.get(key) ?? []) w(undefined);
      this.waiters.delete(key);
    }
    // Not fatal: the slot expires by itself, and parked jobs are woken periodically.
    const done = this.lanes.release(lane, holder).catch(this.onReleaseError);
    const pending = Promise.all([this.givingBack.get(key), done]);
    this.givingBack.set(key, pending);
    void pending.then(() => {
      if (this.givingBack.get(key) === pending) this.givingBack.delete(key);
    });
    return done;
  }
}

const laneKey = (lane: Lane): string => `${lane.tenantId}\n${lane.targetId}`;
