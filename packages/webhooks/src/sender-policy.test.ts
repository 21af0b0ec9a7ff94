import { createWebhookSender, type WebhookSender } from './sender';
import {
  generateCertificate,
  startReceiver,
  type TestCertificate,
  type TestReceiver,
} from './testing/tls-receiver';
import { checkUrlTarget, type LookupFn } from './url-policy';

// Names below exist only in injected lookups; every connection goes to 127.0.0.1.
let certificate: TestCertificate;
let receiver: TestReceiver;
const senders: WebhookSender[] = [];
const body = '{"id":"evt_2"}';

beforeAll(async () => {
  certificate = generateCertificate('DNS:localhost,DNS:receiver.test,IP:127.0.0.1');
  receiver = await startReceiver(certificate, {
    '/ok': (_req, res) => res.writeHead(204).end(),
  });
});

beforeEach(() => {
  receiver.requests.length = 0;
});

afterAll(async () => {
  senders.forEach((s) => s.close());
  await receiver.close();
});

function sender(lookup: LookupFn, allowPrivateTargets: boolean, timeoutMs = 2000): WebhookSender {
  const created = createWebhookSender({
    timeoutMs,
    allowPrivateTargets,
    lookup,
    ca: certificate.cert,
  });
  senders.push(created);
  return created;
}

describe('address pinning', () => {
  it('connects to the checked address, keeping the host name for SNI, certificate and Host', async () => {
    const calls: string[] = [];
    const lookup: LookupFn = async (hostname) => {
      calls.push(hostname);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const pinned = sender(lookup, true);
    const url = `https://receiver.test:${receiver.port}/ok`;
    // receiver.test is unknown to the system resolver: a second, internal lookup would fail.
    await expect(pinned.send({ url, body, headers: {} })).resolves.toMatchObject({
      delivered: true,
      status_code: 204,
    });
    await expect(pinned.send({ url, body, headers: {} })).resolves.toMatchObject({
      delivered: true,
    });
    expect(calls).toEqual(['receiver.test', 'receiver.test']);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[0]?.headers.host).toBe(`receiver.test:${receiver.port}`);
    expect(receiver.requests[0]?.servername).toBe('receiver.test');
  });

  it('rejects DNS rebinding: public at creation, private at delivery → blocked_address', async () => {
    const answers = ['93.184.215.14', '127.0.0.1'];
    const lookup: LookupFn = async () => [{ address: answers.shift() ?? '127.0.0.1', family: 4 }];
    const url = `https://receiver.test:${receiver.port}/ok`;
    await expect(checkUrlTarget(new URL(url), { lookup })).resolves.toMatchObject({
      addresses: [{ address: '93.184.215.14' }],
    });
    const result = await sender(lookup, false).send({ url, body, headers: {} });
    expect(result).toMatchObject({ delivered: false, status_code: null, error: 'blocked_address' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('rejects a name with any private answer, even next to a public one', async () => {
    const lookup: LookupFn = async () => [
      { address: '8.8.8.8', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    const result = await sender(lookup, false).send({
      url: `https://receiver.test:${receiver.port}/ok`,
      body,
      headers: {},
    });
    expect(result.error).toBe('blocked_address');
    expect(receiver.requests).toHaveLength(0);
  });

  it('maps resolver failures to dns_error and a hanging resolver to timeout', async () => {
    const failing: LookupFn = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND receiver.test'), { code: 'ENOTFOUND' });
    };
    const hanging: LookupFn = () => new Promise(() => undefined);
    const url = `https://receiver.test:${receiver.port}/ok`;
    await expect(sender(failing, true).send({ url, body, headers: {} })).resolves.toMatchObject({
      error: 'dns_error',
    });
    await expect(
      sender(hanging, true, 200).send({ url, body, headers: {} }),
    ).resolves.toMatchObject({ error: 'timeout' });
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('policy before connecting', () => {
  const systemOnly: LookupFn = async () => {
    throw new Error('literal hosts must not be looked up');
  };

  it('blocks loopback in any spelling when private targets are not allowed', async () => {
    const strict = sender(systemOnly, false);
    const port = receiver.port;
    for (const host of ['127.0.0.1', '[::1]', '2130706433', '0x7f.1', '[::ffff:127.0.0.1]']) {
      const result = await strict.send({ url: `https://${host}:${port}/ok`, body, headers: {} });
      expect(result).toMatchObject({
        delivered: false,
        status_code: null,
        error: 'blocked_address',
      });
    }
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses non-https and malformed URLs, even with private targets allowed', async () => {
    const lax = sender(systemOnly, true);
    const port = receiver.port;
    for (const url of [
      `http://127.0.0.1:${port}/ok`,
      'not a url',
      `https://u:p@127.0.0.1:${port}/ok`,
    ]) {
      const result = await lax.send({ url, body, headers: {} });
      expect(result).toMatchObject({ delivered: false, status_code: null, error: 'invalid_url' });
    }
    expect(receiver.requests).toHaveLength(0);
  });
});
