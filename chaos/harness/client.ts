/**
 * The scenarios' HTTP client: every request is timed and its outcome kept, so that a
 * scenario can check afterwards what each answer was, when, and how fast.
 */
export interface Outcome {
  /** Which stream of requests this belongs to (ingest, read, keyed, …). */
  lane: string;
  /** When the request was sent and how long until its answer (or its failure), ms. */
  at: number;
  ms: number;
  /** The HTTP status, or 0 when no answer came (then `error` says why). */
  status: number;
  error?: string;
  /** For 5xx: the error body's `type` and the `Retry-After` header. */
  errorType?: string;
  retryAfter?: string | null;
  /** What the request carried that the accounting needs (a message id, a lead email). */
  ref?: string;
  /** For 2xx: the `id` of the JSON body, if it has one (the resource made or found). */
  id?: string;
}

/** No request may take longer than this: past it, the outcome is a hang. */
export const HANG_MS = 10_000;

export interface SendOptions {
  lane: string;
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  ref?: string;
}

export async function send(url: string, opts: SendOptions): Promise<Outcome> {
  const at = Date.now();
  const base = { lane: opts.lane, at, ref: opts.ref };
  try {
    const res = await fetch(url, {
      method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
      headers: {
        ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...opts.headers,
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(HANG_MS),
    });
    const text = await res.text();
    const outcome: Outcome = { ...base, ms: Date.now() - at, status: res.status };
    if (res.ok) {
      try {
        const id = (JSON.parse(text) as { id?: unknown }).id;
        if (typeof id === 'string') outcome.id = id;
      } catch {
        // Not JSON: no id.
      }
    }
    if (res.status >= 500) {
      outcome.retryAfter = res.headers.get('retry-after');
      try {
        outcome.errorType = (JSON.parse(text) as { error?: { type?: string } }).error?.type;
      } catch {
        outcome.errorType = `not JSON: ${text.slice(0, 80)}`;
      }
    }
    return outcome;
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const error =
      e.name === 'TimeoutError' ? 'hang' : (e.cause?.code ?? e.cause?.message ?? e.message);
    return { ...base, ms: Date.now() - at, status: 0, error };
  }
}

/**
 * Runs `next` again and again (each call one request) with `paceMs` between them until
 * `stop()`; every outcome is appended to `into`.
 */
export function lane(
  into: Outcome[],
  next: () => Promise<Outcome>,
  paceMs: number,
): { stop(): Promise<void> } {
  let running = true;
  const done = (async () => {
    while (running) {
      into.push(await next());
      await new Promise((r) => setTimeout(r, paceMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
    },
  };
}

/** `n` tasks at most `concurrency` at a time, in order of their index. */
export async function pool(
  n: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

/** The p-th percentile (0–100) of `values`, 0 when empty. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** `200×12 503×4 ECONNRESET×1`: the statuses (or errors) of `outcomes`, counted. */
export function tally(outcomes: Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const key = o.status ? String(o.status) : (o.error ?? 'error');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return (
    [...counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k}×${n}`)
      .join(' ') || 'none'
  );
}
