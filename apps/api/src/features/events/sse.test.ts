import { Writable } from 'node:stream';
import { SseWriter } from './sse';

/**
 * A response body whose client takes bytes only when told (`take`): a real Writable, so
 * `write`'s return value, `writableLength` and 'drain' behave as on a socket.
 */
class Client extends Writable {
  readonly received: string[] = [];
  private pending: Array<() => void> = [];

  constructor() {
    super({ highWaterMark: 64, decodeStrings: false });
  }

  writeHead(): this {
    return this;
  }

  flushHeaders(): void {}

  override _write(chunk: string, _enc: BufferEncoding, done: () => void): void {
    this.pending.push(() => {
      this.received.push(String(chunk));
      done();
    });
  }

  /** The client reads everything written so far. */
  take(): void {
    while (this.pending.length) this.pending.shift()?.();
  }
}

const event = (n: number) => ['evt_' + String(n).padStart(8, '0'), 'call.started', 'x'.repeat(200)];
const options = { heartbeatMs: 60_000, maxBufferBytes: 1024, retryMs: 2000 };

it('drops a client that takes nothing once more than the bound waits for it', async () => {
  const client = new Client();
  const sse = new SseWriter(client, options);
  sse.open();
  let writes = 0;
  while (sse.isOpen && writes < 100) {
    sse.send(...(event(writes) as [string, string, string]));
    writes += 1;
  }
  expect(await sse.ended).toBe('slow_reader');
  // The write that crossed 1 KiB (about 250 bytes each) was the last one.
  expect(writes).toBeLessThanOrEqual(6);
  expect(client.destroyed).toBe(true);
  expect(sse.send('evt_1', 'call.started', '{}')).toBe(false);
});

it('gives a client the time to take what was written, and drops it after that', async () => {
  const slow = new Client();
  const sse = new SseWriter(slow, { ...options, maxBufferBytes: 1 << 20 });
  sse.open();
  expect(sse.send(...(event(1) as [string, string, string]))).toBe(false);
  const taken = sse.drained(5_000);
  slow.take();
  expect(await taken).toBe(true);
  expect(slow.received.join('')).toContain('id: evt_00000001\nevent: call.started\ndata: x');

  expect(sse.send(...(event(2) as [string, string, string]))).toBe(false);
  expect(await sse.drained(20)).toBe(false);
  expect(await sse.ended).toBe('slow_reader');
  expect(slow.destroyed).toBe(true);
});

it('sends heartbeats, ends once, and writes nothing after its end', async () => {
  const client = new Client();
  const sse = new SseWriter(client, { ...options, heartbeatMs: 5 });
  sse.open();
  const pinged = new Promise<void>((resolve) => {
    const check = setInterval(() => {
      client.take();
      if (client.received.join('').includes(': ping\n\n')) {
        clearInterval(check);
        resolve();
      }
    }, 5);
  });
  await pinged;
  sse.end('shutdown');
  sse.end('error');
  expect(await sse.ended).toBe('shutdown');
  expect(sse.send('evt_1', 'call.started', '{}')).toBe(false);
  client.take();
  expect(client.received[0]).toBe('retry: 2000\n\n');
  expect(client.writableEnded).toBe(true);
});
