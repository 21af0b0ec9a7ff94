import {
  compareKeyset,
  matchesEventLogFilter,
  type EventLogFilter,
  type EventLogStore,
  type KeysetPosition,
} from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import {
  feedEvent,
  READ_BATCH,
  type FeedBatch,
  type FeedSubscriber,
  type TenantFeed,
} from './feed';
import type { SseWriter, StreamEnd } from './sse';

export interface StreamTiming {
  /** An event is sent once it is this old by Postgres' clock (EVENT_STREAM_SETTLE_MS). */
  settleMs: number;
  /** A read that failed is tried again after this long. */
  pollMs: number;
  /** How long a client may take to accept what was written before it is dropped. */
  drainTimeoutMs: number;
}

export interface StreamScope {
  tenantId: string;
  filter: EventLogFilter;
  /** The tenant's retention cutoff (nothing older is read). */
  since: Date;
}

/**
 * One open event stream: sends the tenant's events after `position`, oldest first by
 * (created_at, id), each once, as Postgres has them (never what a process remembers), so a
 * client that reconnects after the last id it got (Last-Event-ID) continues exactly there, on
 * any API process.
 *
 * The order is the position's order, and the position only moves past events that can no
 * longer gain a predecessor: an event is sent once it is `settleMs` old by Postgres' clock
 * (the `now()` of the read that found it, which is no later than that read's snapshot). An
 * event whose transaction commits later than that after its id's time (or whose writer's
 * clock is that far behind Postgres') would be below a position already passed, and is not
 * sent (docs/decisions/0101-event-streams.md).
 *
 * It reads Postgres itself only to catch up: from where it starts to where its tenant's feed
 * has read (feed.ts). It then joins the feed, which reads once for all the streams of the
 * tenant and mode in this process, and sends of each read what its filters pass and its
 * position has not passed (docs/decisions/0118-one-read-per-tenant-for-event-streams.md).
 */
export class EventStream implements FeedSubscriber {
  private draining = false;

  constructor(
    private readonly log: EventLogStore,
    private readonly sse: SseWriter,
    private readonly scope: StreamScope,
    /** Every event at or below it that passes the filters was sent. */
    private position: KeysetPosition,
    private readonly feed: TenantFeed,
    private readonly timing: StreamTiming,
    /** Counts each read of its own. */
    private readonly counted: () => void,
    private readonly logger: Logger,
  ) {}

  end(reason: StreamEnd): void {
    this.sse.end(reason);
  }

  /** Catches up, then takes from the feed until the response ends; resolves then. */
  async run(): Promise<void> {
    try {
      await this.catchUp();
      await this.sse.ended;
    } finally {
      this.feed.leave(this);
    }
  }

  deliver({ events, frontier }: FeedBatch): void {
    if (!this.sse.isOpen) return;
    for (const e of events) {
      if (compareKeyset(e.key, this.position) <= 0) continue;
      if (!matchesEventLogFilter(e.event, this.scope.filter)) continue;
      const ok = this.sse.send(e.event.id, e.event.type, e.envelope);
      if (!this.sse.isOpen) return;
      if (!ok) this.awaitDrain();
    }
    this.advance(frontier);
    if (this.windowClosed()) this.sse.end('window_closed');
    else this.askForWindowEnd();
  }

  /** Reads on its own until it has reached the feed's position, then joins the feed. */
  private async catchUp(): Promise<void> {
    while (this.sse.isOpen) {
      let reached: { settlesInMs: number | null } | null;
      try {
        reached = await this.readOnce();
      } catch (err) {
        // Postgres away or slow: the position is unchanged; read again after a poll.
        this.logger.warn({ err }, 'event stream: read failed; retrying');
        await this.pause(this.timing.pollMs);
        continue;
      }
      if (!reached || !this.sse.isOpen) continue;
      if (this.windowClosed()) {
        this.sse.end('window_closed');
        return;
      }
      const feedAt = this.feed.position;
      if (feedAt === null || compareKeyset(this.position, feedAt) >= 0) {
        this.feed.join(this, this.position, reached.settlesInMs);
        this.askForWindowEnd();
        return;
      }
      // The feed has read past this read meanwhile: read on up to it.
    }
  }

  /**
   * Sends what one read found settled. Null when there may be more to read at once (a full
   * batch, or the stream ended); else every event up to the read's settled time was in it,
   * and `settlesInMs` says when the first one too young to send will be old enough.
   */
  private async readOnce(): Promise<{ settlesInMs: number | null } | null> {
    const { tenantId, filter, since } = this.scope;
    this.counted();
    const read = await this.log.after(tenantId, filter, since, this.position, READ_BATCH);
    const settled = read.readAt.getTime() - this.timing.settleMs;
    for (const e of read.events) {
      const at = e.createdAt.getTime();
      // Ordered by time: this one and every later one are not settled yet.
      if (at > settled) return this.reach(settled, at - settled);
      const { key, envelope } = feedEvent(e);
      const ok = this.sse.send(e.id, e.type, envelope);
      if (!this.sse.isOpen) return null;
      this.position = key;
      if (!ok && !(await this.sse.drained(this.timing.drainTimeoutMs))) return null;
    }
    return read.events.length === READ_BATCH ? null : this.reach(settled, null);
  }

  private reach(settled: number, settlesInMs: number | null): { settlesInMs: number | null } {
    this.advance({ t: settled + 1, id: '' });
    return { settlesInMs };
  }

  private advance(to: KeysetPosition): void {
    if (compareKeyset(to, this.position) > 0) this.position = to;
  }

  /** `created_to` is passed and everything before it was sent. */
  private windowClosed(): boolean {
    const to = this.scope.filter.toExclusive;
    return to !== undefined && compareKeyset(this.position, { t: to.getTime(), id: '' }) >= 0;
  }

  /** A stream with `created_to` ends at the first read past it: asks the feed for that read. */
  private askForWindowEnd(): void {
    const to = this.scope.filter.toExclusive;
    if (to) this.feed.readIn(to.getTime() - this.position.t);
  }

  /**
   * The feed does not wait for a client: one that has not taken what waits for it within
   * `drainTimeoutMs`, or lets more than the writer's bound wait, is dropped (sse.ts).
   */
  private awaitDrain(): void {
    if (this.draining) return;
    this.draining = true;
    void this.sse.drained(this.timing.drainTimeoutMs).then(() => {
      this.draining = false;
    });
  }

  /** Waits `ms`, or until the response ends. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      void this.sse.ended.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
