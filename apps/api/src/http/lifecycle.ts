import type { RequestHandler, Response } from 'express';

/**
 * The API process's stopping state and the work in flight: open responses and running
 * handlers (a handler can outlive its response, e.g. when the client disconnects, and it
 * still holds pool connections). Invariants:
 * - once stopping, every response not yet sent says `Connection: close`, so keep-alive
 *   clients take their next request elsewhere instead of racing the close of an idle socket;
 * - `idle()` resolves only when no response is open and no tracked handler runs, so pools
 *   are never closed under a running handler.
 */
export class Lifecycle {
  private stopping = false;
  private handlers = 0;
  private readonly open = new Set<Response>();
  private waiters: Array<() => void> = [];
  private stopListeners: Array<() => void> = [];

  get isStopping(): boolean {
    return this.stopping;
  }

  /**
   * From now on /readyz fails and every response closes its connection; answers that would
   * not end by themselves (event streams) are told to end (onStop).
   */
  beginStop(): void {
    this.stopping = true;
    for (const res of this.open) closeAfter(res);
    const listeners = this.stopListeners;
    this.stopListeners = [];
    for (const listener of listeners) listener();
  }

  /** Calls `listener` when the stop begins (at once if it has begun). */
  onStop(listener: () => void): void {
    if (this.stopping) listener();
    else this.stopListeners.push(listener);
  }

  /** Counts a request from its arrival until its response is finished or aborted. */
  readonly middleware: RequestHandler = (_req, res, next) => {
    this.open.add(res);
    res.once('close', () => {
      this.open.delete(res);
      this.settle();
    });
    if (this.stopping) closeAfter(res);
    next();
  };

  /** Counts `work` (a handler's promise, a write after the response) until it settles. */
  track<T>(work: Promise<T>): Promise<T> {
    this.handlers += 1;
    return work.finally(() => {
      this.handlers -= 1;
      this.settle();
    });
  }

  /** Wraps middleware so that the promise it returns (if any) is tracked. */
  tracked(handler: RequestHandler): RequestHandler {
    return (req, res, next) => {
      const result: unknown = handler(req, res, next);
      return result instanceof Promise ? this.track(result) : result;
    };
  }

  /** Resolves once nothing is in flight (at once if nothing is). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.open.size === 0 && this.handlers === 0;
  }

  private settle(): void {
    if (!this.isIdle()) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

function closeAfter(res: Response): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}
