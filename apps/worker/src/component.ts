/** Something the worker runs and must stop on shutdown (a BullMQ worker, a timer loop...). */
export interface Component {
  name: string;
  /** Stops taking new work and waits for in-flight work to finish. */
  close(): Promise<void>;
}

/** Anything that stops with a `close()`: a queue worker, a ticker, a provider. */
interface Closable {
  close(): Promise<unknown>;
}

/**
 * One component made of parts that stop together (a queue worker and its reconciler, say),
 * then of what those parts use and must outlive them (a provider, a pump), in that order:
 * a part still running never finds them closed. A null part is one not started.
 */
export function composite(
  name: string,
  parts: ReadonlyArray<Closable | null>,
  usedByParts: readonly Closable[] = [],
): Component {
  return {
    name,
    async close() {
      await Promise.all(parts.map((p) => p?.close()));
      for (const used of usedByParts) await used.close();
    },
  };
}
