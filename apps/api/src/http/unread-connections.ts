import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Connections accepted whose first request has not been read yet. Node's `server.close()`
 * also closes every connection with no request in progress, and a connection whose first
 * request still sits unread in its buffer is one of those: on a busy machine, requests sent
 * before a SIGTERM were cut (ECONNRESET) instead of answered. The stop waits for this set to
 * empty (each connection has sent its request, or closed) before it closes the server.
 */
export function trackUnreadConnections(server: Server): { read(): Promise<void> } {
  const unread = new Set<Socket>();
  let emptied: (() => void) | null = null;
  const done = (socket: Socket) => {
    if (unread.delete(socket) && unread.size === 0) emptied?.();
  };
  server.on('connection', (socket: Socket) => {
    unread.add(socket);
    socket.once('close', () => done(socket));
  });
  server.on('request', (req: { socket: Socket }) => done(req.socket));
  return {
    /** Resolves once every connection accepted so far has sent a request or closed. */
    read: () =>
      unread.size === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            emptied = resolve;
          }),
  };
}
