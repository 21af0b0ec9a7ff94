// proxy-addr (Express's own dependency, behind `req.ip`) publishes no types.
declare module 'proxy-addr' {
  import type { IncomingMessage } from 'node:http';

  /**
   * The client address of `req`: the TCP peer, or the nearest address of X-Forwarded-For
   * that `trust` does not trust (hop 0 is the peer). Undefined when the socket is gone.
   */
  function proxyaddr(
    req: IncomingMessage,
    trust: (address: string, hop: number) => boolean,
  ): string | undefined;
  export = proxyaddr;
}
