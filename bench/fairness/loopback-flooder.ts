/**
 * The attacker of bench part (f) (./loopback.ts), a process of its own with its own share of
 * the machine's cores: requests with a made-up API key (a new one each time) to
 * FLOOD_PORT on 127.0.0.1, from FLOOD_LOCAL_ADDRESS (127.0.0.2: each client socket is bound to
 * it, so the server sees another client address than the measured tenant's 127.0.0.1), as
 * fast as this process can send them. Raw TCP with one prebuilt request, not `http.request`:
 * the flood's rate is then bounded by the machine, not by the client library.
 *
 * - FLOOD_KEEPALIVE connections ask to be kept open and send their next request as soon as
 *   the last is answered, on the same connection while the server keeps it;
 * - FLOOD_CLOSING connections send `Connection: close`, one request a connection, and open
 *   the next as soon as the server has closed the last;
 * in both, a connection the server closes or resets is replaced at once.
 *
 * Every second it prints one JSON line of running totals on stdout (the parent shows them);
 * on SIGTERM, or after FLOOD_MAX_SECONDS whatever happens (a bound if the parent is gone), it
 * stops, lets the requests in flight end (at most 2 s) and prints the final line, `"done":
 * true`. Only 127.0.0.x is accepted, for both ends.
 */
import { connect, type Socket } from 'node:net';

const host = process.env.FLOOD_HOST ?? '127.0.0.1';
const port = Number(process.env.FLOOD_PORT);
const localAddress = process.env.FLOOD_LOCAL_ADDRESS ?? '127.0.0.2';
const path = process.env.FLOOD_PATH ?? '/api/v1/calls';
const keepAliveConnections = Number(process.env.FLOOD_KEEPALIVE ?? 64);
const closingConnections = Number(process.env.FLOOD_CLOSING ?? 64);
const maxSeconds = Number(process.env.FLOOD_MAX_SECONDS ?? 300);

const LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
if (!LOOPBACK.test(host) || !LOOPBACK.test(localAddress) || !(port > 0)) {
  process.stderr.write('loopback-flooder: FLOOD_HOST and FLOOD_LOCAL_ADDRESS must be 127.x\n');
  process.exit(2);
}

/** Running totals (the parent computes rates from two lines). */
const totals = {
  /** Requests written. */
  sent: 0,
  /** Answers, by status code. */
  byStatus: {} as Record<string, number>,
  /** Connections this process opened (connect() called). */
  opened: 0,
  /** Connections that reached `connect`. */
  connected: 0,
  /** Of those, closed by the server (FIN) after its answer said `Connection: close`. */
  closedAfterAnswer: 0,
  /** Closed by the server without an answer to the request in flight (FIN). */
  closedWithoutAnswer: 0,
  /** Reset by the server (RST): e.g. the per-address connection cap, at accept. */
  reset: 0,
  /** connect() failed (refused, no ephemeral port, ...), by error code. */
  connectErrors: {} as Record<string, number>,
};

let stopping = false;
const startedAt = performance.now();
let counter = 0;
const tag = `${process.pid.toString(16)}${Date.now().toString(16)}`.padEnd(20, '0').slice(0, 20);

/** A request with a key never issued: `sk_live_` and 48 hex digits, different each time. */
function requestBytes(keepAlive: boolean): Buffer {
  counter++;
  const key = `sk_live_${tag}${counter.toString(16).padStart(28, '0')}`;
  return Buffer.from(
    `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${key}\r\n` +
      `Connection: ${keepAlive ? 'keep-alive' : 'close'}\r\n\r\n`,
    'latin1',
  );
}

/**
 * One connection: its requests, one at a time; resolves when it is closed (by either side).
 */
function oneConnection(keepAlive: boolean): Promise<void> {
  return new Promise((resolve) => {
    totals.opened++;
    let buffered = '';
    let inFlight = false;
    let answeredClose = false;
    let done = false;
    let connected = false;
    const socket: Socket = connect({ host, port, localAddress });
    socket.setNoDelay(true);
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve();
    };
    const send = () => {
      inFlight = true;
      totals.sent++;
      socket.write(requestBytes(keepAlive));
    };
    socket.on('connect', () => {
      totals.connected++;
      connected = true;
      send();
    });
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      // Every complete response in the buffer: the status line, the head, Content-Length.
      for (;;) {
        const headEnd = buffered.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const head = buffered.slice(0, headEnd);
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        const end = headEnd + 4 + (length ? Number(length[1]) : 0);
        if (buffered.length < end) return;
        buffered = buffered.slice(end);
        const status = head.slice(9, 12);
        totals.byStatus[status] = (totals.byStatus[status] ?? 0) + 1;
        inFlight = false;
        answeredClose = /\r\nconnection:\s*close/i.test(head);
        if (answeredClose) totals.closedAfterAnswer++;
        if (!keepAlive || answeredClose) return; // the server closes it
        if (stopping) {
          finish();
          return;
        }
        send();
      }
    });
    socket.on('end', () => {
      if (inFlight) totals.closedWithoutAnswer++;
      finish();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset may come before this side has seen its connect (a reset at accept).
      if (err.code === 'ECONNRESET' || (connected && err.code === 'EPIPE')) totals.reset++;
      else {
        const code = err.code ?? 'error';
        totals.connectErrors[code] = (totals.connectErrors[code] ?? 0) + 1;
      }
      finish();
    });
    socket.on('close', finish);
  });
}

/** One client slot: a connection after another until the flood stops. */
async function slot(keepAlive: boolean): Promise<void> {
  while (!stopping) await oneConnection(keepAlive);
}

const line = (extra: Record<string, unknown> = {}): string =>
  `${JSON.stringify({
    seconds: Number(((performance.now() - startedAt) / 1000).toFixed(3)),
    ...totals,
    cpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000),
    ...extra,
  })}\n`;

const slots = [
  ...Array.from({ length: keepAliveConnections }, () => slot(true)),
  ...Array.from({ length: closingConnections }, () => slot(false)),
];
const ticker = setInterval(() => process.stdout.write(line()), 1000);

function stop(): void {
  if (stopping) return;
  stopping = true;
  clearInterval(ticker);
  const settled = Promise.all(slots);
  const bound = new Promise<void>((r) => setTimeout(r, 2000).unref());
  void Promise.race([settled, bound]).then(() => {
    process.stdout.write(line({ done: true }), () => process.exit(0));
  });
}

// `on`, not `once`: the signal may come twice (the process group's and a relayed one).
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
setTimeout(stop, maxSeconds * 1000).unref();
