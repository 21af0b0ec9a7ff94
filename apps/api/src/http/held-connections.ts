import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionHold {
  /**
   * When (performance.now() ms) the Retry-After this address was last told ends, if that
   * is still ahead (AnonymousLimits.toldToWait): its new connections wait until then.
   */
  toldToWait: (address: string) => number | undefined;
  /** Addresses never held: the proxies TRUST_PROXY trusts (their connections carry others). */
  exempt: (address: string) => boolean;
  /** While the process stops nothing is held: every accepted request is read and answered. */
  isStopping: () => boolean;
  /** Told of each connection held (a metric). */
  onHeld?: () => void;
}

/** Held connections are released in groups whose deadlines fall in one such slice. */
const GRAIN_MS = 50;

/**
 * A refused client's next connection is not read before its Retry-After
 * (docs/decisions/0121-a-refused-clients-next-connection-waits.md; docs/OPERATIONS.md,
 * Connection cap). A 429 of the limit on requests without a valid credential closes its
 * connection and tells the client when to retry; a connection the same address (the TCP
 * peer) opens before that instant is accepted and paused: its bytes stay in the kernel, no
 * request is parsed, nothing of ours runs, and it is resumed, as it is, at the instant the
 * client was told. A flood that sends its next request the moment it is answered then waits
 * with its connections, bounded by the connection cap (./connection-cap.ts), instead of
 * being answered as fast as it sends. Other addresses are not affected; a client of the
 * same address that opens a new connection waits at most that Retry-After.
 *
 * Cheap by construction: one map read per accepted connection; a held connection costs a
 * set entry and a close listener, and one timer serves every connection whose deadline falls
 * in the same GRAIN_MS slice (never a timer per connection or per request).
 *
 * Invariants: every socket in `due` is paused and has not closed (a close removes it); a
 * slice's timer fires at or after its deadline, never before what the client was told.
 */
export function holdConnectionsOfToldClients(
  server: Server,
  hold: ConnectionHold,
): { release(): void } {
  const due = new Map<number, { sockets: Set<Socket>; timer: NodeJS.Timeout }>();
  const resumeSlice = (slice: number) => {
    const entry = due.get(slice);
    if (entry === undefined) return;
    due.delete(slice);
    clearTimeout(entry.timer);
    for (const socket of entry.sockets) socket.resume();
  };
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || socket.destroyed || hold.exempt(address)) return;
    const until = hold.toldToWait(address);
    if (until === undefined || hold.isStopping()) return;
    const slice = Math.ceil(until / GRAIN_MS) * GRAIN_MS;
    let entry = due.get(slice);
    if (entry === undefined) {
      const timer = setTimeout(() => resumeSlice(slice), slice - performance.now());
      timer.unref();
      entry = { sockets: new Set(), timer };
      due.set(slice, entry);
    }
    const { sockets } = entry;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // After the turn: the HTTP server's own listener resumed the socket, and that resume
    // takes effect on the next tick; this pause comes after it. No byte is read in between
    // (the ticks run before the event loop polls the socket again).
    process.nextTick(() => socket.pause());
    hold.onHeld?.();
  });
  return {
    /** Resumes every held connection now (the process stops: each request gets its answer). */
    release: () => {
      for (const slice of [...due.keys()]) resumeSlice(slice);
    },
  };
}
