import type { Counter } from 'prom-client';
import {
  watchEventStreamNotifications,
  type EventLogStore,
  type EventStreamsStore,
  type KeysetPosition,
  type StreamOpening,
} from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { TenantFeed } from './feed';
import type { SseWriter, StreamEnd } from './sse';
import { EventStream, type StreamScope, type StreamTiming } from './stream';

const MIN_LEASE_MS = 30_000;

/** What the hub holds of an open stream. */
interface OpenStream {
  /** Its lease (event_streams row). */
  leaseId: string;
  tenantId: string;
  keyId: string;
  end(reason: StreamEnd): void;
}

/** A stream admitted (its lease taken) and where it starts. */
export interface StreamStart {
  leaseId: string;
  keyId: string;
  scope: StreamScope;
  position: KeysetPosition;
}

export interface HubSettings {
  databaseUrl: string;
  /** Leases are renewed this often and live four times as long. */
  renewMs: number;
  maxPerKey: number;
  timing: StreamTiming;
}

/**
 * What the streams read and write through: stores on a pool of their own (deps.ts), so
 * that however many streams are open they never wait for, nor make wait, the requests' pool.
 */
export interface HubStores {
  log: EventLogStore;
  leases: EventStreamsStore;
}

const feedKey = (tenantId: string, livemode: boolean): string =>
  `${livemode ? 'live' : 'test'}:${tenantId}`;

/**
 * The event streams of one API process. Invariants: one LISTEN connection per process
 * (opened with the first stream, kept after), whatever the number of streams; one feed per
 * tenant and mode with a stream open here (feed.ts), which every notification of the tenant
 * wakes, and every feed reads again each time the connection is up again (what it missed
 * meanwhile is read from Postgres); every open stream holds a lease this process renews,
 * and a stream whose key was revoked is ended at the next renewal; once stopped, every
 * stream is ended and no new one is admitted.
 */
export class EventStreamHub {
  private readonly feeds = new Map<string, { feed: TenantFeed; streams: number }>();
  private readonly open = new Set<OpenStream>();
  private readonly serving = new Set<Promise<void>>();
  private watcher: { close(): Promise<void> } | null = null;
  private renewal: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly stores: HubStores,
    private readonly settings: HubSettings,
    /** switchboard_event_stream_reads_total */
    private readonly reads: Counter<'read'>,
    private readonly logger: Logger,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** A lease outlives a few missed renewals (a busy process), and a crashed process's
   * streams stop counting against their keys within it. */
  private get ttlMs(): number {
    return Math.max(this.settings.renewMs * 4, MIN_LEASE_MS);
  }

  /** Takes a lease for a stream of `keyId`, unless the key has its maximum open. */
  admit(tenantId: string, keyId: string): Promise<StreamOpening> {
    return this.stores.leases.open(tenantId, keyId, this.settings.maxPerKey, this.ttlMs);
  }

  /** Gives back a lease whose stream never started, or has ended. */
  async release(leaseId: string): Promise<void> {
    await this.stores.leases.close(leaseId).catch((err: unknown) => {
      this.logger.warn({ err }, 'event stream: could not delete its lease (it lapses)');
    });
  }

  /** Opens `sse` and sends the stream `start` on it until it ends; then lets its lease go. */
  serve(start: StreamStart, sse: SseWriter): Promise<void> {
    const served = this.run(start, sse);
    this.serving.add(served);
    const done = () => void this.serving.delete(served);
    served.then(done, done);
    return served;
  }

  private async run(start: StreamStart, sse: SseWriter): Promise<void> {
    const { tenantId, filter } = start.scope;
    const feed = this.feedFor(tenantId, filter.livemode);
    const stream = new EventStream(
      this.stores.log,
      sse,
      start.scope,
      start.position,
      feed,
      this.settings.timing,
      () => this.reads.inc({ read: 'catch_up' }),
      this.logger,
    );
    const open: OpenStream = {
      leaseId: start.leaseId,
      tenantId,
      keyId: start.keyId,
      end: (reason) => stream.end(reason),
    };
    this.open.add(open);
    try {
      if (this.stopped) stream.end('shutdown');
      this.watch();
      sse.open();
      await stream.run();
    } finally {
      this.open.delete(open);
      this.letGo(tenantId, filter.livemode);
      await this.release(start.leaseId);
    }
  }

  /** Ends every stream (the process is stopping; clients reconnect elsewhere). */
  stop(): void {
    this.stopped = true;
    for (const s of [...this.open]) s.end('shutdown');
  }

  /** Ends every stream and waits until each has let its lease go (before the pool closes). */
  async close(): Promise<void> {
    this.stop();
    await Promise.allSettled([...this.serving]);
    if (this.renewal) clearInterval(this.renewal);
    for (const { feed } of this.feeds.values()) feed.close();
    this.feeds.clear();
    await this.watcher?.close();
  }

  /** The feed of a tenant and mode, held for one more stream. */
  private feedFor(tenantId: string, livemode: boolean): TenantFeed {
    const key = feedKey(tenantId, livemode);
    const held = this.feeds.get(key) ?? {
      feed: new TenantFeed(
        tenantId,
        livemode,
        this.stores.log,
        this.settings.timing,
        () => this.reads.inc({ read: 'shared' }),
        this.logger,
      ),
      streams: 0,
    };
    held.streams += 1;
    this.feeds.set(key, held);
    return held.feed;
  }

  /** One stream fewer on the feed; the last one closes it. */
  private letGo(tenantId: string, livemode: boolean): void {
    const key = feedKey(tenantId, livemode);
    const held = this.feeds.get(key);
    if (!held || --held.streams > 0) return;
    held.feed.close();
    this.feeds.delete(key);
  }

  private watch(): void {
    if (this.watcher || this.stopped) return;
    this.watcher = watchEventStreamNotifications(this.settings.databaseUrl, {
      // The notification names the tenant, not the mode: both feeds read.
      onTenant: (tenantId) => {
        for (const livemode of [true, false]) {
          this.feeds.get(feedKey(tenantId, livemode))?.feed.notified();
        }
      },
      onUp: () => {
        for (const { feed } of this.feeds.values()) feed.readIn(0);
      },
      onLoss: (err) =>
        this.logger.warn(
          { err },
          'event streams: LISTEN connection lost; feeds read on their poll meanwhile',
        ),
    });
    this.renewal = setInterval(() => void this.renew(), this.settings.renewMs);
    this.renewal.unref();
  }

  private async renew(): Promise<void> {
    const streams = [...this.open];
    if (streams.length === 0) return;
    try {
      const ending = new Set(
        await this.stores.leases.renew(
          streams.map((s) => ({ id: s.leaseId, tenantId: s.tenantId, keyId: s.keyId })),
          this.ttlMs,
        ),
      );
      for (const s of streams) if (ending.has(s.leaseId)) s.end('revoked');
    } catch (err) {
      this.logger.warn({ err }, 'event streams: could not renew their leases; retrying');
    }
  }
}
