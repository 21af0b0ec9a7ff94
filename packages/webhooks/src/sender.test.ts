import { createWebhookSender, type WebhookSender, type WebhookSenderOptions } from './sender';
import { generateSigningSecret } from './secrets';
import { signPayload } from './sign';
import {
  closedPort,
  generateCertificate,
  startReceiver,
  type TestCertificate,
  type TestReceiver,
} from './testing/tls-receiver';

// Every connection in this file goes to 127.0.0.1: no traffic leaves the machine.
let certificate: TestCertificate;
let receiver: TestReceiver;
let base: string;
const senders: WebhookSender[] = [];
const timers = new Set<NodeJS.Timeout>();

function sender(overrides: Partial<WebhookSenderOptions> = {}): WebhookSender {
  const created = createWebhookSender({
    timeoutMs: 2000,
    allowPrivateTargets: true,
    ca: certificate.cert,
    ...overrides,
  });
  senders.push(created);
  return created;
}

const secret = generateSigningSecret();
const body = JSON.stringify({ id: 'evt_1', event: 'webhook.test', data: { message: 'hi' } });
const headers = () => ({ ...signPayload({ secret, eventId: 'evt_1', body }) });
const paths = () => receiver.requests.map((r) => r.path);
/** Requests each connection of the receiver has read. */
const servedOn = new WeakMap<object, number>();

beforeAll(async () => {
  certificate = generateCertificate('DNS:localhost,DNS:receiver.test,IP:127.0.0.1');
  receiver = await startReceiver(certificate, {
    '/ok': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
    '/fail': (_req, res) => res.writeHead(500).end('boom'),
    '/after-200ms': (_req, res) => {
      const timer = setTimeout(() => res.writeHead(204).end(), 200);
      timers.add(timer);
    },
    '/redirect': (_req, res) =>
      res.writeHead(302, { location: `https://127.0.0.1:${receiver.port}/target` }).end(),
    '/target': (_req, res) => res.writeHead(200).end('should never be reached'),
    // Never answers: a send ends only at its deadline.
    '/slow': () => undefined,
    '/slow-body': (_req, res) => {
      res.writeHead(200).write('partial');
    },
    '/big': (_req, res) => res.writeHead(200).end(Buffer.alloc(1024 * 1024, 'x')),
    // Answers a connection's first request; closes it on any later one, unanswered: a
    // receiver whose keep-alive timeout ended as the request arrived.
    '/closes-reused': (req, res) => {
      const served = servedOn.get(req.socket) ?? 0;
      servedOn.set(req.socket, served + 1);
      if (served === 0) res.writeHead(200).end('ok');
      else req.socket.destroy();
    },
    '/closes': (req) => req.socket.destroy(),
  });
  base = `https://127.0.0.1:${receiver.port}`;
});

beforeEach(() => {
  receiver.requests.length = 0;
});

afterAll(async () => {
  senders.forEach((s) => s.close());
  timers.forEach((t) => clearTimeout(t));
  await receiver.close();
});

describe('createWebhookSender against a local HTTPS receiver', () => {
  it('delivers on 200 with the signed body, content type and user agent', async () => {
    const signed = headers();
    const started = performance.now();
    const result = await sender().send({ url: `${base}/ok`, body, headers: signed });
    const elapsed = performance.now() - started;
    expect(result).toMatchObject({
      delivered: true,
      status_code: 200,
      error: null,
      response_excerpt: 'ok',
    });
    // Whole milliseconds, within the time the call took.
    expect(Number.isInteger(result.duration_ms)).toBe(true);
    expect(result.duration_ms).toBeLessThanOrEqual(Math.ceil(elapsed));
    expect(receiver.requests).toHaveLength(1);
    const [received] = receiver.requests;
    expect(received).toMatchObject({ method: 'POST', path: '/ok', body });
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.headers['user-agent']).toBe('Switchboard-Webhooks/1');
    // The signature headers arrive as signed (the SDK's tests verify what the signer makes).
    expect(received?.headers).toMatchObject(signed);
  });

  it('measures the attempt: a receiver that answers after 200 ms takes at least that', async () => {
    const started = performance.now();
    const result = await sender().send({ url: `${base}/after-200ms`, body, headers: headers() });
    const elapsed = performance.now() - started;
    expect(result).toMatchObject({ delivered: true, status_code: 204 });
    expect(result.duration_ms).toBeGreaterThanOrEqual(190);
    expect(result.duration_ms).toBeLessThanOrEqual(Math.ceil(elapsed));
  });

  it('reports http_error with the status on 500', async () => {
    const result = await sender().send({ url: `${base}/fail`, body, headers: headers() });
    expect(result).toMatchObject({
      delivered: false,
      status_code: 500,
      error: 'http_error',
      response_excerpt: 'boom',
    });
    expect(paths()).toEqual(['/fail']);
  });

  it('never follows a redirect', async () => {
    const result = await sender().send({ url: `${base}/redirect`, body, headers: headers() });
    expect(result).toMatchObject({ delivered: false, status_code: 302, error: 'redirect' });
    expect(paths()).toEqual(['/redirect']);
  });

  it('times out a receiver that never answers at its own deadline', async () => {
    // Two sends at once, with deadlines of 300 ms and 1 s: the shorter ends first, and took
    // less time, on a machine of any speed (a send that ignored its deadline, or waited for
    // an answer, would not). On a loaded machine the deadline may even fall before the
    // request is out: then the receiver saw nothing.
    const ended: number[] = [];
    const send = (timeoutMs: number) =>
      sender({ timeoutMs })
        .send({ url: `${base}/slow`, body, headers: headers() })
        .then((result) => (ended.push(timeoutMs), result));
    const [short, long] = await Promise.all([send(300), send(1000)]);
    for (const result of [short, long])
      expect(result).toMatchObject({
        delivered: false,
        status_code: null,
        error: 'timeout',
        response_excerpt: null,
      });
    expect(ended).toEqual([300, 1000]);
    expect(short.duration_ms).toBeGreaterThanOrEqual(250);
    expect(short.duration_ms).toBeLessThan(long.duration_ms);
    expect(paths().every((p) => p === '/slow')).toBe(true);
  });

  it('counts a 2xx whose body never ends as delivered, cutting the read at the deadline', async () => {
    // A deadline a loaded machine's handshake and headers fit in (300 ms did not, at load 17):
    // the body never ends, so the read is cut at the deadline whatever its length.
    const result = await sender({ timeoutMs: 2_000 }).send({
      url: `${base}/slow-body`,
      body,
      headers: headers(),
    });
    expect(result).toMatchObject({
      delivered: true,
      status_code: 200,
      error: null,
      response_excerpt: 'partial',
    });
  });

  it('reports connection_refused for a closed port', async () => {
    const port = await closedPort();
    const result = await sender().send({
      url: `https://127.0.0.1:${port}/`,
      body,
      headers: headers(),
    });
    expect(result).toMatchObject({
      delivered: false,
      status_code: null,
      error: 'connection_refused',
    });
  });

  it('reports tls_error for an untrusted self-signed certificate', async () => {
    const result = await sender({ ca: undefined }).send({
      url: `${base}/ok`,
      body,
      headers: headers(),
    });
    expect(result).toMatchObject({ delivered: false, status_code: null, error: 'tls_error' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('reports tls_error when the certificate does not cover the host name', async () => {
    const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const url = `https://elsewhere.test:${receiver.port}/ok`;
    const result = await sender({ lookup }).send({ url, body, headers: headers() });
    expect(result).toMatchObject({ delivered: false, error: 'tls_error' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('reads at most maxResponseBytes of a 1 MiB response and still delivers', async () => {
    const result = await sender().send({ url: `${base}/big`, body, headers: headers() });
    expect(result).toMatchObject({ delivered: true, status_code: 200, error: null });
    expect(result.response_excerpt).toBe('x'.repeat(1024));
    const wide = await sender({ maxResponseBytes: 4096, excerptBytes: 100_000 }).send({
      url: `${base}/big`,
      body,
      headers: headers(),
    });
    expect(wide.response_excerpt).toHaveLength(4096);
    expect(paths()).toEqual(['/big', '/big']);
  });

  it('sends exactly one request per send, reusing the pooled connection', async () => {
    const shared = sender();
    for (let i = 0; i < 3; i++) {
      await expect(
        shared.send({ url: `${base}/ok`, body, headers: headers() }),
      ).resolves.toMatchObject({
        delivered: true,
      });
      expect(receiver.requests).toHaveLength(i + 1);
    }
  });

  it('sends again on a new connection a request the receiver closed its pooled one on', async () => {
    const shared = sender();
    const send = () => shared.send({ url: `${base}/closes-reused`, body, headers: headers() });
    await expect(send()).resolves.toMatchObject({ delivered: true });
    // The pooled connection is closed as the request arrives: sent again, one attempt.
    await expect(send()).resolves.toMatchObject({ delivered: true, error: null });
    expect(paths()).toEqual(['/closes-reused', '/closes-reused', '/closes-reused']);
  });

  it('does not send again a request whose new connection the receiver closed', async () => {
    const result = await sender().send({ url: `${base}/closes`, body, headers: headers() });
    expect(result).toMatchObject({ delivered: false, status_code: null, error: 'network_error' });
    expect(paths()).toEqual(['/closes']);
  });
});
