/**
 * Coalesces calls made by concurrent jobs of one process into one call per batch: `add`
 * queues an item and resolves with its own result once the batch it fell into has run.
 * Group commit: while fewer than `maxRunning` batches run, a batch starts at the end of the
 * current event-loop turn (calls made in the same turn join it); otherwise calls queue
 * until a running batch ends, at most `maxWaitMs`, or until `maxItems` are queued. So an
 * idle process adds no wait, and a busy one sends few, large batches. With `gapMs`, a batch
 * that ends does not send the calls queued meanwhile at once: they go when the first of them
 * has waited `maxWaitMs`, with every call made until then; and a call that finds nothing
 * running waits until `gapMs` after the last batch ended. A steady stream of calls then
 * makes fewer, larger batches than back to back.
 *
 * Invariants: every item is settled exactly once (its result, or its own error); a batch
 * that fails for a reason `retryable` says may pass is run again as it is (up to `retries`
 * times, e.g. a deadlock); one that fails for a reason `shared` says is everyone's (an
 * outage) fails every caller; one that fails otherwise is run again item by item, so one bad
 * item fails only its own caller.
 */
export interface BatcherOptions {
  maxItems: number;
  maxWaitMs: number;
  maxRunning: number;
  retries: number;
  retryable(err: unknown): boolean;
  shared(err: unknown): boolean;
  /**
   * How long after a batch ends a call that finds nothing running waits at the least; set
   * (over 0), calls queued while a batch ran also wait their `maxWaitMs` (default 0).
   */
  gapMs?: number;
}

/**
 * For calls that fail together and are never worth retrying item by item (a lookup, a Redis
 * script): one batch in flight, calls made meanwhile wait for it (at most 2 ms) or until
 * `maxItems` are queued; a failure fails every caller of its batch, who handles it as if
 * its own call had failed.
 */
export function oneBatchInFlight(maxItems: number): BatcherOptions {
  return {
    maxItems,
    maxWaitMs: 2,
    maxRunning: 1,
    retries: 0,
    retryable: () => false,
    shared: () => true,
  };
}

interface Pending<In, Out> {
  item: In;
  resolve(out: Out): void;
  reject(err: unknown): void;
}

export class Batcher<In, Out> {
  private queue: Pending<In, Out>[] = [];
  private timer: NodeJS.Timeout | null = null;
  private soon: NodeJS.Immediate | null = null;
  private running = 0;
  /** When the last batch ended (ms). */
  private lastEnd = 0;

  /** `run` returns one result per item, in the items' order. */
  constructor(
    private readonly run: (items: In[]) => Promise<Out[]>,
    private readonly opts: BatcherOptions,
  ) {}

  add(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.queue.length >= this.opts.maxItems) this.flush();
      else if (this.running < this.opts.maxRunning) this.start();
      else this.timer ??= setTimeout(() => this.flush(), this.opts.maxWaitMs);
    });
  }

  /** A batch at the end of this turn, or once the gap after the last one has passed. */
  private start(): void {
    const wait = this.lastEnd + (this.opts.gapMs ?? 0) - Date.now();
    if (wait > 0) this.timer ??= setTimeout(() => this.flush(), wait);
    else this.soon ??= setImmediate(() => this.flush());
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.soon) clearImmediate(this.soon);
    this.timer = null;
    this.soon = null;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    this.running++;
    void this.runBatch(batch, 0).finally(() => {
      this.running--;
      this.lastEnd = Date.now();
      if (this.queue.length === 0) return;
      // Calls queued while it ran set a maxWaitMs timer, which start() keeps: they go then.
      if (this.opts.gapMs) this.start();
      else this.flush();
    });
  }

  private async runBatch(batch: Pending<In, Out>[], tries: number): Promise<void> {
    let results: Out[];
    try {
      results = await this.run(batch.map((p) => p.item));
    } catch (err) {
      if (tries < this.opts.retries && this.opts.retryable(err)) {
        return this.runBatch(batch, tries + 1);
      }
      if (batch.length === 1 || this.opts.retryable(err) || this.opts.shared(err)) {
        for (const p of batch) p.reject(err);
        return;
      }
      await Promise.all(batch.map((p) => this.runBatch([p], tries)));
      return;
    }
    batch.forEach((p, i) => p.resolve(results[i] as Out));
  }
}
