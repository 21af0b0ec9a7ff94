import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@switchboard/logger';
import { answerClientErrors } from '../../apps/api/src/http/client-errors';
import { createTestContext, type TestContext } from '../support/context';

// What Node's HTTP parser refuses before Express sees it (docs/API.md, Errors) is answered in
// the API's error shape, as apps/api/src/server.ts serves it: not Node's bare status line.
let ctx: TestContext;
let server: Server;
let port: number;

beforeAll(async () => {
  ctx = await createTestContext();
  server = createServer(ctx.app);
  answerClientErrors(server, createLogger('test', 'silent'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await ctx?.close();
});

/** Sends raw bytes and reads the whole answer (the server closes the connection). */
function raw(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    });
  });
}

it('a request line and headers over 16 KiB → 431 request_headers_too_large, as JSON', async () => {
  const res = await raw(
    `GET /api/v1/calls?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      'Authorization: Bearer sk_live_x\r\n\r\n',
  );
  expect(res.status).toBe(431);
  expect(res.headers).toMatch(/^Content-Type: application\/json/im);
  expect(res.headers).toMatch(/^X-Request-Id: req_[0-9a-f]{24}$/im);
  expect(res.headers).toMatch(/^Connection: close$/im);
  const body = JSON.parse(res.body);
  expect(body).toEqual({
    error: {
      type: 'invalid_request_error',
      code: 'request_headers_too_large',
      message: 'The request line and headers exceed 16 KiB',
      doc_url: 'docs/API.md#error-request_headers_too_large',
    },
    request_id: expect.stringMatching(/^req_[0-9a-f]{24}$/),
  });
  expect(res.headers).toContain(body.request_id);
});

it('bytes that are not HTTP → 400 malformed_request, as JSON', async () => {
  const res = await raw('HELLO there\r\n\r\n');
  expect(res.status).toBe(400);
  expect(JSON.parse(res.body)).toMatchObject({
    error: { type: 'invalid_request_error', code: 'malformed_request' },
  });
});

it('a well-formed request on the same server is served as usual', async () => {
  const res = await raw('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  expect(res.status).toBe(200);
});
