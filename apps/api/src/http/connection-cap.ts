import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

export interface ConnectionCap {
  /** Open connections one address may hold; 0: no cap. */
  maxPerAddress: number;
  /**
   * Addresses never counted: the proxies TRUST_PROXY trusts (Express's `trust proxy fn`),
   * whose connections carry many clients; the proxy limits those itself.
   */
  exempt: (address: string) => boolean;
  /** Told of each socket refused (a metric). */
  onRefused?: () => void;
}

/**
 * A cap on the connections one client address holds open at once (API_MAX_CONNECTIONS_PER_IP;
 * docs/OPERATIONS.md, Connection cap). Counted on the server's `connection` event, by the TCP
 * peer: a socket beyond the cap is reset at once, in the tick it is accepted (before any of its bytes is read), so a flood
 * of connections from one address costs an accept and a reset each, and never holds memory,
 * a parser or a request of ours. Other addresses are not affected.
 *
 * Invariant: `open` holds, for each address, the sockets of it accepted and not yet closed
 * (an entry is deleted when its count reaches 0, so the map never outgrows the connections).
 */
export function capConnectionsPerAddress(server: Server, cap: ConnectionCap): void {
  if (cap.maxPerAddress <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    // No address: the peer is already gone (Node then closes the socket itself).
    if (address === undefined || cap.exempt(address)) return;
    const count = open.get(address) ?? 0;
    if (count >= cap.maxPerAddress) {
      // A reset (RST) rather than a FIN: the client learns at once, and this side keeps no
      // TIME_WAIT state for a connection it never wanted.
      socket.resetAndDestroy();
      cap.onRefused?.();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/** Whether the app's TRUST_PROXY trusts `address` as a proxy (Express compiles the setting). */
export function trustedProxy(app: Express): (address: string) => boolean {
  const trust = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  return (address) => trust(address, 0);
}
