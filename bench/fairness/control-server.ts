/**
 * The control of bench part (f) (./loopback.ts): a bare Node HTTP server on 127.0.0.1:PORT
 * that answers every request 429 at once, with a body the size of the API's and
 * `Connection: close` (as the API's refusal of an address over its limit), and nothing else:
 * no Express, no middleware, no Redis, no logging. The same flood against it says what the
 * machine itself costs tenant A (the flooder's CPU and the kernel's, on the same cores); the
 * difference from the API's figure is what the product adds. GET /healthz answers 200.
 *
 * Env: PORT.
 */
import { createServer } from 'node:http';

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) {
  process.stderr.write('control-server: PORT is required\n');
  process.exit(2);
}

const REFUSAL = Buffer.from(
  JSON.stringify({
    error: {
      type: 'rate_limit_error',
      code: 'rate_limited',
      message: 'Too many requests without a valid credential from this address; retry later.',
      request_id: 'req_control0000000000000000',
      fields: ['client-address'],
    },
  }),
);

const server = createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  req.resume();
  res
    .writeHead(429, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': REFUSAL.length,
      'retry-after': '1',
      connection: 'close',
    })
    .end(REFUSAL);
});
server.listen(port, '127.0.0.1');

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
