import {
  watchEventStreamNotifications,
  type EventStreamsStore,
  type StreamOpening,
} from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { StreamEnd } from './sse';

const MIN_LEASE_MS = 30_000;

/** What the hub holds of an open stream. */
export interface HubStream {
  /** Its lease (event_streams row). */
  leaseId: string;
  tenantId: string;
  keyId: string;
  wake(): void;
  end(reason: StreamEnd): void;
}

export interface HubSettings {
  databaseUrl: string;
  /** Leases are renewed this often and live four times as long. */
  renewMs: number;
  maxPerKey: number;
}

/**
 * The event streams of one API process. Invariants: one LISTEN connection per process
 * (opened with the first stream, kept after), whatever the number of streams; a stream is
 * woken by every notification of its tenant, and every stream is woken each time the
 * connection is up again (what it missed meanwhile is read from Postgres); every open stream
 * holds a lease this process renews, and a stream whose key was revoked is ended at the next
 * renewal; once stopped, every stream is ended and no new one is admitted.
 */
export class EventStreamHub {
  private readonly byTenant = new Map<string, Set<HubStream>>();
  private watcher: { close(): Promise<void> } | null = null;
  private renewal: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly leases: EventStreamsStore,
    private readonly settings: HubSettings,
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
    return this.leases.open(tenantId, keyId, this.settings.maxPerKey, this.ttlMs);
  }

  /** Gives back a lease whose stream never started. */
  async release(leaseId: string): Promise<void> {
    await this.leases.close(leaseId).catch((err: unknown) => {
      this.logger.warn({ err }, 'event stream: could not delete its lease (it lapses)');
    });
  }

  /** Holds `stream` until it ends (`ended`), then lets its lease go. */
  attach(stream: HubStream, ended: Promise<unknown>): void {
    if (this.stopped) {
      stream.end('shutdown');
    }
    this.watch();
    const set = this.byTenant.get(stream.tenantId) ?? new Set<HubStream>();
    set.add(stream);
    this.byTenant.set(stream.tenantId, set);
    void ended.then(async () => {
      set.delete(stream);
      if (set.size === 0 && this.byTenant.get(stream.tenantId) === set) {
        this.byTenant.delete(stream.tenantId);
      }
      await this.release(stream.leaseId);
    });
  }

  /** Ends every stream (the process is stopping; clients reconnect elsewhere). */
  stop(): void {
    this.stopped = true;
    for (const s of this.all()) s.end('shutdown');
  }

  async close(): Promise<void> {
    this.stop();
    if (this.renewal) clearInterval(this.renewal);
    await this.watcher?.close();
  }

  private all(): HubStream[] {
    return [...this.byTenant.values()].flatMap((set) => [...set]);
  }

  private watch(): void {
    if (this.watcher || this.stopped) return;
    this.watcher = watchEventStreamNotifications(this.settings.databaseUrl, {
      onTenant: (tenantId) => {
        for (const s of this.byTenant.get(tenantId) ?? []) s.wake();
      },
      onUp: () => {
        for (const s of this.all()) s.wake();
      },
      onLoss: (err) =>
        this.logger.warn(
          { err },
          'event streams: LISTEN connection lost; streams read on their poll meanwhile',
        ),
    });
    this.renewal = setInterval(() => void this.renew(), this.settings.renewMs);
    this.renewal.unref();
  }

  private async renew(): Promise<void> {
    const streams = this.all();
    if (streams.length === 0) return;
    try {
      const ending = new Set(
        await this.leases.renew(
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
