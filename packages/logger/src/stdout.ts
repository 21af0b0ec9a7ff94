import pino from 'pino';

/** The stream `bufferedStdout` returns: pino's own destination (sonic-boom) on fd 1. */
export type BufferedStdout = ReturnType<typeof pino.destination>;

/** Lines are held until this many bytes wait: one write(2) for a batch, not one per line. */
export const STDOUT_BATCH_BYTES = 4096;
/** However quiet the process, a line waits at most about this long for its write. */
export const STDOUT_FLUSH_EVERY_MS = 1000;
/** Held bytes beyond which new lines are dropped (and counted) rather than memory growing. */
export const STDOUT_MAX_HELD_BYTES = 16 * 1024 * 1024;

/**
 * Standard output for a busy process's log (docs/decisions/0107-api-hot-path.md): pino's
 * destination with `sync: false`, so lines are written in batches of STDOUT_BATCH_BYTES off
 * the request path, instead of one blocking write(2) per line. Guarantees:
 * - order: lines reach stdout in the order they were logged;
 * - latency: a line is written within STDOUT_FLUSH_EVERY_MS (periodic flush) at the latest;
 * - exit: `flushLogger` before a graceful exit writes every line; on `process.exit` pino's
 *   exit hook writes what is held synchronously; a SIGKILL or a crash of the runtime loses
 *   at most the held batch (under STDOUT_BATCH_BYTES) and the one write in flight;
 * - memory: while stdout does not keep up, at most STDOUT_MAX_HELD_BYTES are held; lines
 *   beyond are dropped and `onDrop` is told (a blocking write would stall every request
 *   instead).
 */
export function bufferedStdout(onDrop: () => void = () => undefined): BufferedStdout {
  const dest = pino.destination({
    dest: 1,
    sync: false,
    minLength: STDOUT_BATCH_BYTES,
    periodicFlush: STDOUT_FLUSH_EVERY_MS,
    maxLength: STDOUT_MAX_HELD_BYTES,
  });
  dest.on('drop', onDrop);
  return dest;
}

/**
 * Resolves once every line logged so far has been handed to the kernel (a no-op for a
 * synchronous destination). Call it before a graceful `process.exit`.
 */
export function flushLogger(logger: pino.Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}
