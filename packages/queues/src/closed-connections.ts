import type { EventEmitter } from 'node:events';

/** The BullMQ objects whose Redis connections outlive their close(): queues and workers. */
type BullObject = object;

const CONNECTION_FIELDS = ['connection', 'blockingConnection'] as const;

/**
 * BullMQ starts each of its Redis connections when a queue or worker is built (a wait for
 * ready, then an INFO for the version check) and reports a failed start as an 'error' event of
 * that connection. Its close() removes every listener of the connection even while the start
 * is still pending; when the pending INFO then fails (the connection closed under it: a
 * SIGTERM right after boot, a close on a slow Redis), the 'error' has no listener and Node
 * throws it as an unhandled rejection, which kills the process.
 *
 * Invariant kept here: an 'error' that a BullMQ connection emits with nobody listening (which
 * only happens after its close() removed the listeners of its queue or worker) is dropped;
 * every error emitted while a listener exists goes to it unchanged. `onDropped` sees the
 * dropped ones (a log line at debug level: the start of something already closed).
 */
export function dropErrorsAfterClose<T extends BullObject>(
  target: T,
  onDropped: (err: unknown) => void = () => undefined,
): T {
  for (const field of CONNECTION_FIELDS) {
    const connection = (target as Record<string, unknown>)[field] as EventEmitter | undefined;
    if (!connection || typeof connection.emit !== 'function') continue;
    const emit = connection.emit.bind(connection);
    connection.emit = (event: string | symbol, ...args: unknown[]): boolean => {
      if (event !== 'error' || connection.listenerCount('error') > 0) return emit(event, ...args);
      onDropped(args[0]);
      return false;
    };
  }
  return target;
}
