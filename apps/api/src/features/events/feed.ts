import {
  compareKeyset,
  type EventLogStore,
  type KeysetPosition,
  type StoredEvent,
} from '@switchboard/db';
import { buildEnvelope } from '@switchboard/events';
import type { Logger } from '@switchboard/logger';

/** Events read at a time. */
export const READ_BATCH = 100;

/** An event of a feed, its envelope serialised once for every stream. */
export interface FeedEvent {
  event: StoredEvent;
  key: KeysetPosition;
  envelope: string;
}

/**
 * What one read of a feed hands each of its streams: the events after the previous
 * `frontier` up to the new one, every one of them (whatever the stream's filters), in order.
 */
export interface FeedBatch {
  events: readonly FeedEvent[];
  frontier: KeysetPosition;
}

export interface FeedSubscriber {
  deliver(batch: FeedBatch): void;
}

export interface FeedTiming {
  settleMs: number;
  pollMs: number;
}

export const feedEvent = (event: StoredEvent): FeedEvent => ({
  event,
  key: { t: event.createdAt.getTime(), id: event.id },
  envelope: JSON.stringify(buildEnvelope(event)),
});

/**
 * The events of one tenant in one mode for every stream of them in this process: one read of
 * Postgres per wake-up, whatever the number of streams (docs/decisions/0118-one-read-per-tenant-for-event-streams.md).
 *
 * Invariants: `frontier` is set by the first stream to join and only grows after; every
 * event at or below it that the settle rule allows a stream to send
 * (docs/decisions/0101-event-streams.md) has been handed to every stream that was joined
 * when it moved; a stream joins only at or past the frontier (it read up to there itself),
 * so each batch it is handed starts at or below its position: it misses nothing, and drops
 * what its position has passed.
 * Reads take turns (one at a time) on one timer: a notification asks for a read once its
 * events are settled (`settleMs` later), an event read too young for a read when it will be
 * old enough, a full batch for the next at once, and an idle feed reads every `pollMs`; asks
 * made before a read is due fold into it. Nothing is read while no stream is joined.
 */
export class TenantFeed {
  private frontier: KeysetPosition | null = null;
  private readonly live = new Set<FeedSubscriber>();
  /** Local time of the next read (null: none asked for). */
  private dueAt: number | null = null;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  private closed = false;

  constructor(
    private readonly tenantId: string,
    private readonly livemode: boolean,
    private readonly log: EventLogStore,
    private readonly timing: FeedTiming,
    private readonly counted: () => void,
    private readonly logger: Logger,
  ) {}

  /** Everything up to here was handed to the joined streams; null before the first joined. */
  get position(): KeysetPosition | null {
    return this.frontier;
  }

  /** The tenant's events changed (a notification): read once they are settled. */
  notified(): void {
    this.readIn(this.timing.settleMs);
  }

  /** Asks for a read in `ms` or sooner (a feed reads every `pollMs` anyway). */
  readIn(ms: number): void {
    const at = Date.now() + Math.min(Math.max(0, ms), this.timing.pollMs);
    if (this.dueAt === null || at < this.dueAt) this.dueAt = at;
    this.arm();
  }

  /**
   * Hands `s` every event after `reached` from now on. `reached` is where the stream has read
   * to itself, at or past `position` (the first stream's sets it); `settlesInMs` is when the
   * first event it saw too young to send will be old enough.
   */
  join(s: FeedSubscriber, reached: KeysetPosition, settlesInMs: number | null): void {
    if (this.frontier === null) this.frontier = reached;
    else if (compareKeyset(reached, this.frontier) < 0) {
      throw new Error('event stream joined its feed before reaching it');
    }
    this.live.add(s);
    this.readIn(settlesInMs ?? this.timing.pollMs);
  }

  leave(s: FeedSubscriber): void {
    this.live.delete(s);
  }

  close(): void {
    this.closed = true;
    this.live.clear();
    clearTimeout(this.timer);
  }

  private arm(): void {
    clearTimeout(this.timer);
    if (this.closed || this.reading || this.live.size === 0 || this.dueAt === null) return;
    this.timer = setTimeout(() => void this.read(), Math.max(0, this.dueAt - Date.now()));
    this.timer.unref();
  }

  private async read(): Promise<void> {
    const from = this.frontier;
    // A timer may fire a little early by Date's clock: a read too soon would find young events.
    if (this.dueAt === null || Date.now() < this.dueAt || from === null || this.live.size === 0) {
      return this.arm();
    }
    this.dueAt = null;
    this.reading = true;
    let next = this.timing.pollMs;
    try {
      this.counted();
      const filter = { livemode: this.livemode };
      const read = await this.log.after(this.tenantId, filter, new Date(from.t), from, READ_BATCH);
      next = this.hand(from, read.events, read.readAt.getTime() - this.timing.settleMs);
    } catch (err) {
      this.logger.warn({ err }, 'event streams: shared read failed; retrying after a poll');
    } finally {
      this.reading = false;
    }
    this.readIn(next);
  }

  /** Hands out what is settled; returns when to read next. */
  private hand(from: KeysetPosition, events: StoredEvent[], settled: number): number {
    const young = events.findIndex((e) => e.createdAt.getTime() > settled);
    const ready = young < 0 ? events : events.slice(0, young);
    // A full batch of settled events may be followed by more: read on from its last one.
    // Otherwise every event dated `settled` or earlier was in the read.
    const more = young < 0 && events.length === READ_BATCH ? events[events.length - 1] : undefined;
    const reached = more
      ? { t: more.createdAt.getTime(), id: more.id }
      : { t: settled + 1, id: '' };
    const frontier = compareKeyset(reached, from) > 0 ? reached : from;
    this.frontier = frontier;
    const batch: FeedBatch = { events: ready.map(feedEvent), frontier };
    for (const s of [...this.live]) s.deliver(batch);
    if (more) return 0;
    const first = events[young];
    return first ? first.createdAt.getTime() - settled : this.timing.pollMs;
  }
}
