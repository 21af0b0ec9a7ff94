import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Deps } from '../deps';
import { capConnectionsPerAddress, trustedProxy } from './connection-cap';
import { holdConnectionsOfToldClients } from './held-connections';

/**
 * What the API's HTTP server does with connections before any request exists
 * (docs/OPERATIONS.md, Connection cap): at most API_MAX_CONNECTIONS_PER_IP per client
 * address, and a refused client's next connections unread until its Retry-After. The cap's
 * listener runs first, so a connection beyond the cap is reset, never held. Returns the hold,
 * whose connections the stop releases.
 */
export function guardServer(server: Server, app: Express, deps: Deps): { release(): void } {
  const exempt = trustedProxy(app);
  capConnectionsPerAddress(server, {
    maxPerAddress: deps.config.http.maxConnectionsPerAddress,
    exempt,
    onRefused: () => deps.metrics.connectionsRefused.inc(),
  });
  return holdConnectionsOfToldClients(server, {
    toldToWait: (address) => deps.anonymousLimits.toldToWait(address),
    exempt,
    isStopping: () => deps.lifecycle.isStopping,
    onHeld: () => deps.metrics.connectionsHeld.inc(),
  });
}
