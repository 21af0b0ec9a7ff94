import { randomUUID } from 'node:crypto';
import type { ClaimedDelivery, Delivery } from '@switchboard/db';
import { catalog } from '@switchboard/queues';
import type { WorkerDeps } from '../deps';
import { PARKED_DELAY_MS, type Attempt } from './deliver';
import type { DeliveryBatches } from './delivery-batches';
import { deliveryJob, enqueueDeliveries } from './enqueue-deliveries';
import { FullLanes } from './full-lanes';
import type { InFlightLanes, Lane, Verdict } from './in-flight';
import { InlineAttempts, SLOW_ATTEMPT_MS, type Unit } from './inline-attempts';
import { WarmSlots, type HeldSlot } from './warm-slots';

/**
 * How long a first attempt refused by its full lane waits for a slot its process's own
 * attempts of the lane free, before it is handed on (parked): well within SEND_WITHIN_MS.
 */
const SLOT_WAIT_MS = 1_000;

type Full = { d: Delivery; lane: Lane; verdict: Exclude<Verdict, 'ok'> };

interface Held {
  claimed: ClaimedDelivery;
  lane: Lane;
  slot: HeldSlot;
  unit: Unit;
}

/**
 * The first attempts of the deliveries the relay has just made, made by the relay's own
 * process: the deliveries were created claimed by it (DeliveryLifecycle.publishNext), so an
 * attempt here needs no job, no take and no claim of its own: its row is written twice, when
 * it is made and when its outcome is recorded.
 *
 * Each needs a unit of the process's budget (./inline-attempts.ts: at most `budget` at once,
 * half of it for one tenant) and a slot in its lanes (./in-flight.ts, handed from one first
 * attempt of a lane to the next by ./warm-slots.ts). A delivery that gets neither now is given
 * back (DeliveryLifecycle.release: pending, due now) and handed to a delivery job, added
 * parked if its lane is full. The relay claims only as many deliveries as the budget has room
 * for (`rooms`), and is woken when an attempt's POST is over (`onRoom`; its outcome is
 * recorded after): the backlog waits in the outbox, where tenants take turns.
 *
 * Crash safety: a worker that dies (or fails) anywhere from the relay's commit on leaves
 * claimed rows, whose claims lapse after WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS: the
 * reconciler's lapse check gives each a recovered delivery job, which claims it again. A
 * give-back or hand-on that fails leaves rows claimed (they lapse) or pending and due (the
 * reconciler finds them overdue): never lost.
 */
export class FirstAttempts {
  private readonly inline: InlineAttempts;
  private readonly warm: WarmSlots;
  private readonly full: FullLanes;
  private onRoom: () => void = () => undefined;
  /** First attempts waiting for a slot their lane's attempts in this process will free. */
  private readonly waiting = new Set<Promise<void>>();

  constructor(
    private readonly deps: WorkerDeps,
    private readonly batches: DeliveryBatches,
    private readonly lanes: InFlightLanes,
    private readonly attempt: Attempt,
    budget: number,
    private readonly parkedDelayMs = PARKED_DELAY_MS,
  ) {
    this.inline = new InlineAttempts(budget);
    this.warm = new WarmSlots(lanes, (err) =>
      deps.logger.warn({ err }, 'could not release a lane slot'),
    );
    this.full = new FullLanes(
      (names) => lanes.free(names),
      (tenantId, targetId) => this.warm.mine(tenantId, targetId, Date.now() - SLOW_ATTEMPT_MS),
    );
  }

  /**
   * What the relay may claim now, in deliveries: `room` in all, `rooms` for each tenant
   * holding units or refused by a full lane, `otherRoom` for any other (its share, within
   * `room`; units not taken or slow: ./inline-attempts.ts; a refused tenant's no more than
   * its lanes have room for: ./full-lanes.ts). Deliveries that find no free unit go to
   * delivery jobs.
   */
  async rooms(): Promise<{ room: number; rooms: Map<string, number>; otherRoom: number }> {
    const room = this.inline.room;
    const otherRoom = Math.min(room, this.inline.share);
    const rooms = this.inline.rooms();
    // Redis away: unbounded, as before (refused deliveries are parked).
    const bounds = await this.full.bounds().catch(() => new Map<string, number>());
    for (const [tenantId, bound] of bounds) {
      rooms.set(tenantId, Math.min(rooms.get(tenantId) ?? otherRoom, bound));
    }
    return { room, rooms, otherRoom };
  }

  /** `wake` runs each time room is made: an attempt's POST is over (its unit is free again). */
  whenRoom(wake: () => void): void {
    this.onRoom = wake;
  }

  /**
   * Starts the first attempt of each delivery in `made` (claimed by the relay; `since`: when
   * it asked for the claims) that has budget and a lane slot; gives the others back and
   * hands them to delivery jobs. Resolves once each is started or handed on, not when the
   * attempts end.
   */
  async start(made: readonly ClaimedDelivery[], since: number): Promise<void> {
    const now: Held[] = [];
    const later: Delivery[] = [];
    const full: Full[] = [];
    const wait: Array<Omit<Held, 'slot'> & { verdict: Exclude<Verdict, 'ok'> }> = [];
    await Promise.all(
      made.map(async (claimed) => {
        const d = claimed.delivery;
        const lane = { tenantId: d.tenantId, targetId: d.subscriptionId ?? d.receptionistId ?? '' };
        // Taken before the first await: the budget is never overshot.
        const unit = this.inline.take(d.tenantId);
        if (!unit) {
          const verdict = await this.lanes.peek(lane).catch(() => 'ok' as const);
          if (verdict === 'ok') return void later.push(d);
          this.full.refused(lane, verdict);
          return void full.push({ d, lane, verdict });
        }
        const got = await this.warm
          .acquire(lane, () => `inline:${d.id}#${randomUUID()}`)
          .catch((err: unknown) => {
            this.deps.logger.warn({ err, deliveryId: d.id }, 'lane slot unavailable; queued');
            return { verdict: 'error' as const };
          });
        if (got.verdict === 'ok') {
          this.full.served(lane);
          return void now.push({ claimed, lane, slot: got.slot, unit });
        }
        if (got.verdict !== 'error') this.full.refused(lane, got.verdict);
        // Its lane is full, and this process holds some of its slots: the next one it frees
        // is this delivery's (its claim and unit held meanwhile), not a parking cycle.
        if (got.verdict !== 'error' && this.warm.holds(lane))
          return void wait.push({ claimed, lane, unit, verdict: got.verdict });
        this.inline.untake(unit);
        if (got.verdict === 'error') later.push(d);
        else full.push({ d, lane, verdict: got.verdict });
      }),
    );
    // The attempts go first: each must be sent within SEND_WITHIN_MS of its claim (deliver.ts).
    for (const held of now) {
      void this.inline.start(
        held.unit,
        (sent) => this.run(held, since, sent),
        () => this.onRoom(),
      );
    }
    for (const w of wait) {
      const p = this.waitForSlot(w, since).finally(() => this.waiting.delete(p));
      this.waiting.add(p);
    }
    const { firstAttempts } = this.deps.metrics;
    if (now.length) firstAttempts.inc({ path: 'inline' }, now.length);
    await this.handOn(later, full);
  }

  /** Starts `w`'s attempt with the next slot its lane frees here, or hands it on. */
  private async waitForSlot(
    w: Omit<Held, 'slot'> & { verdict: Exclude<Verdict, 'ok'> },
    since: number,
  ): Promise<void> {
    const slot = await this.warm.waitFor(w.lane, SLOT_WAIT_MS);
    if (slot) {
      this.deps.metrics.firstAttempts.inc({ path: 'inline' });
      void this.inline.start(
        w.unit,
        (sent) => this.run({ ...w, slot }, since, sent),
        () => this.onRoom(),
      );
      return;
    }
    this.inline.untake(w.unit);
    this.onRoom();
    await this.handOn([], [{ d: w.claimed.delivery, lane: w.lane, verdict: w.verdict }]);
  }

  /**
   * Gives deliveries back (pending, due now) and hands them to delivery jobs: `later` queued,
   * `full` parked under their full lane.
   */
  private async handOn(later: Delivery[], full: Full[]): Promise<void> {
    if (later.length === 0 && full.length === 0) return;
    const { firstAttempts, deliveryWaits } = this.deps.metrics;
    if (later.length) firstAttempts.inc({ path: 'job' }, later.length);
    if (full.length) firstAttempts.inc({ path: 'parked' }, full.length);
    try {
      await this.batches.lifecycle.release(
        this.deps.knex,
        [...later, ...full.map((f) => f.d)].map((d) => d.id),
        0,
      );
      const open = (d: Delivery) => ({ ...d, claims: 0, nextAttemptAt: new Date() });
      await enqueueDeliveries(this.deps, later.map(open));
      if (full.length === 0) return;
      // Parked: delayed and listed under the full lane, which wakes them as slots free.
      await enqueueDeliveries(
        this.deps,
        full.map((f) => open(f.d)),
        { delayMs: this.parkedDelayMs },
      );
      await Promise.all(
        full.map((f) =>
          this.lanes.park(f.lane, f.verdict, catalog.deliveries.jobId(deliveryJob(open(f.d)))),
        ),
      );
      for (const f of full) deliveryWaits.inc({ lane: f.verdict });
    } catch (err) {
      // Claimed rows lapse, pending ones are overdue: the reconciler hands them on.
      this.deps.logger.warn({ err }, 'could not hand first attempts on; the reconciler will');
    }
  }

  /** Waits for the attempts running, then gives every warm lane slot back. */
  async close(): Promise<void> {
    await Promise.all([...this.waiting]);
    await this.inline.drain();
    await this.warm.close();
  }

  /**
   * One first attempt. Its lane slot, like its budget unit, counts a POST open to the
   * receiver: both are handed on (./warm-slots.ts) or given back as soon as the POST is over,
   * and the outcome is recorded after, so the next first attempt of the lane starts while
   * this one's record is on its way. The claim stays held until that record (crash safety as
   * before).
   */
  private async run({ claimed, lane, slot }: Held, since: number, sent: () => void): Promise<void> {
    const d = claimed.delivery;
    let posted: () => void = () => undefined;
    const over = new Promise<void>((resolve) => (posted = resolve));
    const attempt = this.attempt(
      { deliveryId: d.id, round: 1, attempt: 1 },
      { claimed, since, onSent: posted },
    );
    // Also over when the attempt ends without a POST (paused, canceled, throttled, late).
    attempt.then(posted, posted);
    await this.lanes.hold(
      lane,
      slot.holder,
      () => over,
      (err) => this.deps.logger.warn({ err, deliveryId: d.id }, 'slot not renewed'),
    );
    try {
      await this.warm.release(lane, slot);
    } finally {
      sent();
    }
    try {
      const end = await attempt;
      // Throttled (given back, due at its slot): a job waits for the slot it was given.
      if (end) {
        const next = { ...d, claims: 0, nextAttemptAt: new Date(end.throttledUntil) };
        await enqueueDeliveries(this.deps, [next]);
      }
    } catch (err) {
      // The claim lapses and the reconciler redoes the attempt (same event id).
      this.deps.logger.warn({ err, deliveryId: d.id }, 'first delivery attempt failed');
    }
  }
}
