import type { OutgoingHttpHeaders } from 'node:http';

/** Why a stream ended. */
export type StreamEnd =
  | 'client' // the client went away
  | 'slow_reader' // more than the bound was waiting for it, or it took nothing for too long
  | 'shutdown' // the API process is stopping
  | 'revoked' // its API key was revoked
  | 'window_closed' // created_to has passed and everything before it was sent
  | 'error';

/** What the writer needs of an HTTP response (a ServerResponse). */
export interface SseTarget {
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  flushHeaders(): void;
  write(chunk: string): boolean;
  end(): unknown;
  destroy(): unknown;
  readonly writableLength: number;
  /** Whether the response (or its connection) has closed already. */
  readonly closed: boolean;
  once(event: 'close' | 'drain', listener: () => void): unknown;
  off(event: 'close' | 'drain', listener: () => void): unknown;
}

export interface SseOptions {
  /** A `: ping` comment this often, so proxies and clients see the connection alive. */
  heartbeatMs: number;
  /** Bytes waiting to be sent beyond which the client is dropped (ended at once). */
  maxBufferBytes: number;
  /** The reconnection delay clients are told (`retry:`). */
  retryMs: number;
}

/**
 * One Server-Sent Events response (text/event-stream). Invariants: nothing is written after
 * it ended; the bytes waiting for the client never exceed `maxBufferBytes` by more than the
 * one write that crossed the bound, after which the response is destroyed (its buffer freed,
 * the client reconnects with Last-Event-ID and loses nothing); it ends exactly once, and
 * `ended` resolves then with the reason.
 */
export class SseWriter {
  private reason: StreamEnd | null = null;
  private heartbeat: NodeJS.Timeout | undefined;
  private resolveEnded!: (reason: StreamEnd) => void;
  readonly ended: Promise<StreamEnd> = new Promise((r) => (this.resolveEnded = r));

  constructor(
    private readonly res: SseTarget,
    private readonly opts: SseOptions,
  ) {
    res.once('close', () => this.finish('client'));
    // The client may have gone while the stream was being set up.
    if (res.closed) this.finish('client');
  }

  get isOpen(): boolean {
    return this.reason === null;
  }

  /** Sends the headers and the reconnection delay, and starts the heartbeats. */
  open(): void {
    if (!this.isOpen) return;
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      // Proxies that buffer responses (nginx) pass this one through as it is written.
      'X-Accel-Buffering': 'no',
    });
    this.res.flushHeaders();
    this.write(`retry: ${this.opts.retryMs}\n\n`);
    this.heartbeat = setInterval(() => this.write(': ping\n\n'), this.opts.heartbeatMs);
    this.heartbeat.unref();
  }

  /**
   * One event: `id:`, `event:` and `data:` (one line: JSON never contains a raw newline).
   * False when the client has not taken what was written before (wait for `drained`) or
   * the stream has ended.
   */
  send(id: string, event: string, data: string): boolean {
    return this.write(`id: ${id}\nevent: ${event}\ndata: ${data}\n\n`);
  }

  /**
   * Resolves true once everything written has been handed to the socket, false when the
   * stream ends first or `timeoutMs` passes (the client is then too slow and is dropped).
   */
  drained(timeoutMs: number): Promise<boolean> {
    if (!this.isOpen) return Promise.resolve(false);
    if (this.res.writableLength === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.res.off('drain', onDrain);
        this.res.off('close', onClose);
        if (!ok && this.isOpen) this.drop();
        resolve(ok && this.isOpen);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.res.once('drain', onDrain);
      this.res.once('close', onClose);
    });
  }

  /** Ends the response normally (everything written is still sent). */
  end(reason: StreamEnd): void {
    if (!this.isOpen) return;
    this.finish(reason);
    this.res.end();
  }

  private write(chunk: string): boolean {
    if (!this.isOpen) return false;
    const ok = this.res.write(chunk);
    if (this.res.writableLength > this.opts.maxBufferBytes) {
      this.drop();
      return false;
    }
    return ok;
  }

  /** A slow reader: its buffer is freed at once rather than sent. */
  private drop(): void {
    this.finish('slow_reader');
    this.res.destroy();
  }

  private finish(reason: StreamEnd): void {
    if (this.reason !== null) return;
    this.reason = reason;
    clearInterval(this.heartbeat);
    this.resolveEnded(reason);
  }
}
