import type { EventLogFilter, EventLogStore, KeysetPosition } from '@switchboard/db';
import { buildEnvelope } from '@switchboard/events';
import type { Logger } from '@switchboard/logger';
import type { SseWriter, StreamEnd } from './sse';

/** Events read at a time. */
const BATCH = 100;

export interface StreamTiming {
  /** An event is sent once it is this old by Postgres' clock (EVENT_STREAM_SETTLE_MS). */
  settleMs: number;
  /** An idle stream reads again after this long without a wake-up. */
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
 * (created_at, id), each once, reading them from Postgres (never from memory), so a client
 * that reconnects after the last id it got (Last-Event-ID) continues exactly there, on any
 * API process.
 *
 * The order is the position's order, and the position only moves past events that can no
 * longer gain a predecessor: an event is sent once it is `settleMs` old by Postgres' clock
 * (the `now()` of the read that found it, which is no later than that read's snapshot). An
 * event whose transaction commits later than that after its id's time (or whose writer's
 * clock is that far behind Postgres') would be below a position already passed, and is not
 * sent (docs/decisions/0101-event-streams.md).
 */
export class EventStream {
  private wakeUp: (() => void) | null = null;
  private woken = false;

  constructor(
    private readonly log: EventLogStore,
    private readonly sse: SseWriter,
    private readonly scope: StreamScope,
    private position: KeysetPosition,
    private readonly timing: StreamTiming,
    private readonly logger: Logger,
  ) {
    // However it ends (the client went away too), the loop stops at once.
    void sse.ended.then(() => this.wake());
  }

  /** New events may be there: read now (or as soon as the current read is done). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  end(reason: StreamEnd): void {
    this.sse.end(reason);
    this.wake();
  }

  /** Reads and sends until the response ends; resolves then. */
  async run(): Promise<void> {
    while (this.sse.isOpen) {
      this.woken = false;
      let waitMs: number;
      try {
        waitMs = await this.readOnce();
      } catch (err) {
        // Postgres away or slow: the position is unchanged; read again after a poll.
        this.logger.warn({ err }, 'event stream: read failed; retrying');
        waitMs = this.timing.pollMs;
      }
      if (waitMs > 0 && this.sse.isOpen) await this.sleep(waitMs);
    }
  }

  /** Sends what is ready; returns how long to wait before the next read (0: at once). */
  private async readOnce(): Promise<number> {
    const { tenantId, filter, since } = this.scope;
    const { events, readAt } = await this.log.after(tenantId, filter, since, this.position, BATCH);
    const frontier = readAt ? readAt.getTime() - this.timing.settleMs : null;
    for (const e of events) {
      const at = e.createdAt.getTime();
      // Ordered by time: this one and every later one are not settled yet.
      if (frontier === null || at > frontier) return at - (frontier ?? at) + 1;
      const ok = this.sse.send(e.id, e.type, JSON.stringify(buildEnvelope(e)));
      if (!this.sse.isOpen) return 0;
      this.position = { t: at, id: e.id };
      if (!ok && !(await this.sse.drained(this.timing.drainTimeoutMs))) return 0;
    }
    if (events.length === BATCH) return 0;
    if (!filter.toExclusive) return this.timing.pollMs;
    // Everything dated before created_to is settled and sent: nothing more can come.
    const settled = frontier ?? (await this.log.now()).getTime() - this.timing.settleMs;
    const closesIn = filter.toExclusive.getTime() - settled;
    if (closesIn <= 0) {
      this.sse.end('window_closed');
      return 0;
    }
    return Math.min(this.timing.pollMs, closesIn + 1);
  }

  /** Waits `ms`, or less when woken (a wake-up during the read counts too). */
  private sleep(ms: number): Promise<void> {
    if (this.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}
