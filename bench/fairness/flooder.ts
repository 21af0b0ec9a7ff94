/**
 * The attacker of bench (c), in a process of its own (as a real one is: its CPU is not the
 * measuring client's, but it shares the machine's cores with the API). It sends, over
 * FLOOD_CONNECTIONS keep-alive connections, requests without a valid credential to
 * FLOOD_URL: in turn a made-up API key (a new one each time), no Authorization, and a wrong
 * ingestion token on telephony ingestion. Each connection sends its next request as soon as
 * the last is answered, or paced to its share of FLOOD_RATE requests a second (0: unpaced).
 * On SIGTERM it stops, waits for the requests in flight, and prints one JSON line on stdout:
 * the requests sent, their answers by status, its seconds and its own CPU milliseconds.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';

const base = String(process.env.FLOOD_URL);
const connections = Number(process.env.FLOOD_CONNECTIONS ?? 50);
const rate = Number(process.env.FLOOD_RATE ?? 0);
const kinds = (process.env.FLOOD_KINDS ?? 'bogus-key,no-key,ingest-token').split(',');

const agent = new Agent({ keepAlive: true, maxSockets: connections });
const byStatus: Record<string, number> = {};
const byKind: Record<string, number> = {};
let stop = false;
let sent = 0;

function send(kind: string): Promise<void> {
  const ingest = kind === 'ingest-token';
  const headers: Record<string, string> = {};
  if (kind === 'bogus-key')
    headers.authorization = `Bearer sk_live_${randomBytes(24).toString('hex')}`;
  if (ingest) {
    headers.authorization = `Bearer ${randomBytes(24).toString('hex')}`;
    headers['content-type'] = 'application/json';
  }
  return new Promise((resolve) => {
    const req = request(
      ingest ? `${base}/internal/v1/telephony/events` : `${base}/api/v1/usage`,
      { agent, method: ingest ? 'POST' : 'GET', headers },
      (res) => {
        res.resume();
        res.on('end', () => {
          const status = String(res.statusCode);
          byStatus[status] = (byStatus[status] ?? 0) + 1;
          resolve();
        });
      },
    );
    req.on('error', () => {
      byStatus.error = (byStatus.error ?? 0) + 1;
      resolve();
    });
    req.end(ingest ? '{}' : undefined);
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const started = performance.now();
const cpuAtStart = process.cpuUsage();
const interval = rate ? (connections * 1000) / rate : 0;
const loops = Array.from({ length: connections }, async (_, i) => {
  let due = performance.now() + (interval * i) / connections;
  for (let n = i; !stop; n++) {
    if (interval) {
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      due += interval;
    }
    const kind = kinds[n % kinds.length] as string;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    sent++;
    await send(kind);
  }
});

// `on`, not `once`: the signal comes twice (the group's, and tsx relaying its own), and a
// second one unhandled would end the process before it has said its result.
process.on('SIGTERM', () => {
  if (stop) return;
  stop = true;
  void Promise.all(loops).then(() => {
    const cpu = process.cpuUsage(cpuAtStart);
    const seconds = (performance.now() - started) / 1000;
    agent.destroy();
    process.stdout.write(
      `${JSON.stringify({
        requests: sent,
        byStatus,
        byKind,
        seconds: Number(seconds.toFixed(2)),
        perSecond: Math.round(sent / seconds),
        cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      })}\n`,
      () => process.exit(0),
    );
  });
});
