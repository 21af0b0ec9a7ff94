/**
 * The delivery benchmark's raw reference (phase b), run as its own process like the worker it
 * is compared with: keep-alive axios POSTs, the worker's HTTP client and options
 * (packages/webhooks/src/sender.ts: an https Agent with keepAlive, `maxRedirects: 0`, no
 * proxy, no decompression, the body as a Buffer), at the worker's concurrency, and nothing
 * else. It reports its own CPU over the loop, so the engine's own CPU per delivery is the
 * worker's minus this loop's per request.
 *
 * Env: RAW_URL, RAW_COUNT, RAW_CONCURRENCY, RAW_BODY (the payload), RAW_HEADERS (JSON),
 * RAW_ID_PREFIX (each request's `x-service-event-id` is this plus its index); the receiver's
 * CA comes from NODE_EXTRA_CA_CERTS, as for the worker. Reports over IPC: `{kind:
 * 'progress', done}` every second, then `{kind: 'done', ...}` with the elapsed time measured
 * here, and exits.
 */
import { Agent } from 'node:https';
import axios from 'axios';
import { threadDelta, threadTime, type ThreadTime } from './cpu';
import { nowMs } from './protocol';

export interface RawLoopDone {
  kind: 'done';
  done: number;
  errors: number;
  seconds: number;
  /** This process's CPU from the first request to the last answer (user + system, seconds). */
  cpuSeconds: number;
  cpuSystemSeconds: number;
  /** This process's main thread over the loop: on a CPU, and waiting for one. */
  thread: ThreadTime | null;
  latenciesMs: number[];
}
export type FromRawLoop = { kind: 'progress'; done: number } | RawLoopDone;

const MAX_ERRORS = 100;

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`raw loop needs ${name}`);
  return v;
}

async function main(): Promise<void> {
  const url = need('RAW_URL');
  const count = Number(need('RAW_COUNT'));
  const concurrency = Number(need('RAW_CONCURRENCY'));
  const payload = Buffer.from(need('RAW_BODY'), 'utf8');
  const headers = JSON.parse(need('RAW_HEADERS')) as Record<string, string>;
  const idPrefix = need('RAW_ID_PREFIX');
  const agent = new Agent({ keepAlive: true });
  const client = axios.create();
  const latencies: number[] = [];
  let next = 0;
  let done = 0;
  let errors = 0;
  const ticker = setInterval(() => process.send?.({ kind: 'progress', done }), 1000);
  const cpu0 = process.cpuUsage();
  const thread0 = threadTime('self');
  const started = nowMs();
  const loop = async () => {
    while (next < count && errors < MAX_ERRORS) {
      const i = next++;
      const t = nowMs();
      try {
        const res = await client.post<string>(url, payload, {
          httpsAgent: agent,
          maxRedirects: 0,
          proxy: false,
          decompress: false,
          responseType: 'text',
          validateStatus: () => true,
          transformRequest: [(d: unknown) => d],
          headers: { ...headers, 'x-service-event-id': `${idPrefix}${i}` },
        });
        if (res.status !== 200) errors++;
      } catch {
        errors++;
      }
      latencies.push(nowMs() - t);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = (nowMs() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const thread = threadDelta(thread0, threadTime('self'));
  clearInterval(ticker);
  agent.destroy();
  const result: RawLoopDone = {
    kind: 'done',
    done,
    errors,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    cpuSystemSeconds: cpu.system / 1e6,
    thread,
    latenciesMs: latencies,
  };
  process.send?.(result, () => process.exit(0));
}

main().catch((err: unknown) => {
  process.stderr.write(`raw loop failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
