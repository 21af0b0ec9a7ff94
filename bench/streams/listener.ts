/**
 * The load process of `npm run bench:streams` (bench/streams.ts starts one or more): opens
 * the event streams it is given on the API at 127.0.0.1 and reports on stdout, one line
 * each, what the parent needs:
 *
 *   o <stream>                     the stream answered 200 (it is open)
 *   e <stream> <tag> <ms> <id>     an event arrived: its tag (the `from` of a `call.started`,
 *                                  which the parent chose), the time it was read (ms since the
 *                                  epoch, sub-millisecond), its event id
 *   x <stream> <why>               the stream ended or failed (it is not reopened: a run with
 *                                  any is reported)
 *
 * Input (env): LISTENER_BASE (http://127.0.0.1:<port>), LISTENER_STREAMS (JSON: an array of
 * {i, key, from}: the stream's number, its API key and the loopback source address it
 * connects from), LISTENER_OPENING (streams being opened at once, 20).
 */
import { request, type ClientRequest } from 'node:http';

interface Assigned {
  i: number;
  key: string;
  /** A loopback source address (127.0.0.x): the API caps connections per client address. */
  from: string;
}

const base = new URL(process.env.LISTENER_BASE ?? '');
if (base.hostname !== '127.0.0.1') throw new Error('the listener only connects to 127.0.0.1');
const streams = JSON.parse(process.env.LISTENER_STREAMS ?? '[]') as Assigned[];
const OPENING = Number(process.env.LISTENER_OPENING ?? 20);
/** Attempts to open one stream (a 429 or 5xx while the others open is retried). */
const ATTEMPTS = 5;

const now = (): number => performance.timeOrigin + performance.now();
const out: string[] = [];
let flushing = false;
/** Lines are batched per tick: one write for every event a chunk carried. */
function say(line: string): void {
  out.push(line);
  if (flushing) return;
  flushing = true;
  setImmediate(() => {
    flushing = false;
    process.stdout.write(`${out.splice(0).join('\n')}\n`);
  });
}

const requests: ClientRequest[] = [];
const TAG = /"from":"(\+\d+)"/;

/** Opens one stream; resolves true once it answered 200, false when it failed for good. */
function open(s: Assigned, attempt = 1): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: base.port,
        path: '/api/v1/events/stream',
        localAddress: s.from,
        agent: false,
        headers: { authorization: `Bearer ${s.key}`, accept: 'text/event-stream' },
      },
      (res) => {
        if (res.statusCode !== 200) {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString('utf8')));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if ((status === 429 || status >= 500) && attempt < ATTEMPTS) {
              setTimeout(() => void open(s, attempt + 1).then(resolve), 1000 * attempt);
              return;
            }
            say(`x ${s.i} open:${status}:${body.replace(/\s+/g, ' ').slice(0, 200)}`);
            resolve(false);
          });
          return;
        }
        say(`o ${s.i}`);
        resolve(true);
        res.setEncoding('utf8');
        let pending = '';
        res.on('data', (chunk: string) => {
          const at = now();
          pending += chunk;
          const blocks = pending.split('\n\n');
          pending = blocks.pop() ?? '';
          for (const block of blocks) {
            let id = '';
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('id: ')) id = line.slice(4);
              else if (line.startsWith('data: ')) data = line.slice(6);
            }
            if (!data) continue; // `retry:` and `: ping`
            say(`e ${s.i} ${TAG.exec(data)?.[1] ?? '-'} ${at.toFixed(3)} ${id}`);
          }
        });
        res.on('end', () => say(`x ${s.i} ended`));
        res.on('error', (err) => say(`x ${s.i} error:${err.message}`));
      },
    );
    req.on('error', (err) => {
      say(`x ${s.i} error:${err.message}`);
      resolve(false);
    });
    req.end();
    requests.push(req);
  });
}

async function main(): Promise<void> {
  let next = 0;
  const opener = async () => {
    while (next < streams.length) {
      const s = streams[next++] as Assigned;
      await open(s);
    }
  };
  await Promise.all(Array.from({ length: Math.min(OPENING, streams.length) }, opener));
}

const stop = () => {
  for (const req of requests) req.destroy();
  process.stdout.write(`${out.splice(0).join('\n')}\n`, () => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
void main();
