import type { Readable } from 'node:stream';

/**
 * Reads at most `maxBytes` of a response body, then destroys the stream (and so its socket:
 * an unread remainder must never be left on a pooled keep-alive connection). Never rejects:
 * a stream error or the `signal` firing ends the read with whatever arrived so far.
 */
export function readCapped(
  stream: Readable,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let finished = false;
    const finish = (destroy: boolean): void => {
      if (finished) return;
      finished = true;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onEnd);
      signal.removeEventListener('abort', onAbort);
      if (destroy) stream.destroy();
      resolve(Buffer.concat(chunks, total));
    };
    const onData = (chunk: Buffer | string): void => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      const room = maxBytes - total;
      chunks.push(buffer.length > room ? buffer.subarray(0, room) : buffer);
      total += Math.min(buffer.length, room);
      if (total >= maxBytes) finish(true);
    };
    const onEnd = (): void => finish(false);
    const onAbort = (): void => finish(true);
    // An error after finish() must not crash the process: keep a no-op listener attached.
    stream.on('error', () => undefined);
    if (signal.aborted || maxBytes <= 0) return finish(true);
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
