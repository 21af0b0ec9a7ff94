import { checkUrlTarget, parseWebhookUrl, WebhookTargetError, type LookupFn } from './url-policy';

/** Fake DNS: names map to fixed answers; nothing ever reaches a real resolver. */
const zone: Readonly<Record<string, string[]>> = {
  'localhost.test': ['127.0.0.1'],
  'internal.test': ['10.0.0.7'],
  'metadata.test': ['169.254.169.254'],
  'metadata6.test': ['fd00:ec2::254'],
  'v6-loopback.test': ['::1'],
  'mapped.test': ['::ffff:192.168.0.1'],
  'mixed.test': ['8.8.8.8', '10.0.0.1'],
  'mixed6.test': ['2606:4700::1111', 'fe80::1'],
  'cgnat.test': ['100.64.1.1'],
  'nat64.test': ['64:ff9b::a9fe:a9fe'],
  'public.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'garbage.test': ['not-an-ip'],
  'empty.test': [],
};

const lookups: string[] = [];
const lookup: LookupFn = async (hostname) => {
  lookups.push(hostname);
  const answer = zone[hostname.replace(/\.$/, '')]; // a real resolver ignores the root dot
  if (!answer)
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

async function check(raw: string, allowPrivate = false) {
  const parsed = parseWebhookUrl(raw);
  if (!parsed.ok) throw new Error(`parse failed: ${parsed.reason}`);
  return checkUrlTarget(parsed.url, { lookup, allowPrivate });
}

async function codeOf(raw: string): Promise<string> {
  try {
    await check(raw);
    return 'ok';
  } catch (error) {
    return error instanceof WebhookTargetError ? error.code : String(error);
  }
}

const hostileLiterals = [
  'https://127.0.0.1/',
  'https://127.0.0.1:8443/hook',
  'https://127.0.0.1./',
  'https://2130706433/',
  'https://0x7f000001/',
  'https://0x7f.1/',
  'https://0177.0.0.1/',
  'https://0177.1/',
  'https://127.1/',
  'https://127.000.000.001/',
  'https://%31%32%37.0.0.1/',
  'https://0/',
  'https://0.0.0.0/',
  'https://[::ffff:127.0.0.1]/',
  'https://[0:0:0:0:0:ffff:7f00:1]/',
  'https://[::127.0.0.1]/',
  'https://[::1]/',
  'https://[::]/',
  'https://169.254.169.254/latest/meta-data',
  'https://[::ffff:169.254.169.254]/',
  'https://[fd00:ec2::254]/',
  'https://[fd00::1]/',
  'https://[fc00::1]/',
  'https://[fe80::1]/',
  'https://[fec0::1]/',
  'https://[64:ff9b::7f00:1]/',
  'https://[64:ff9b::10.0.0.1]/',
  'https://[2002:7f00:1::]/',
  'https://[2002:a9fe:a9fe::1]/',
  'https://[2001::1]/',
  'https://[2001:db8::1]/',
  'https://[100::1]/',
  'https://[ff02::1]/',
  'https://10.1.2.3/',
  'https://172.16.5.4/',
  'https://192.168.0.1/',
  'https://100.64.0.1/',
  'https://192.0.2.1/',
  'https://198.51.100.1/',
  'https://203.0.113.1/',
  'https://198.18.0.1/',
  'https://192.0.0.1/',
  'https://192.88.99.1/',
  'https://224.0.0.1/',
  'https://255.255.255.255/',
  'https://240.0.0.1/',
  'https://0xa9.0xfe.0xa9.0xfe/',
  'https://3232235521/',
];

const hostileNames = [
  'https://localhost.test/',
  'https://internal.test/',
  'https://metadata.test/',
  'https://metadata6.test/',
  'https://v6-loopback.test/',
  'https://mapped.test/',
  'https://mixed.test/',
  'https://mixed6.test/',
  'https://cgnat.test/',
  'https://nat64.test/',
  'https://LocalHost.Test./',
];

describe('checkUrlTarget SSRF corpus', () => {
  beforeEach(() => {
    lookups.length = 0;
  });

  it('has at least 40 hostile inputs', () => {
    expect(hostileLiterals.length + hostileNames.length).toBeGreaterThanOrEqual(40);
  });

  it.each(hostileLiterals)('rejects literal %s without any DNS lookup', async (raw) => {
    await expect(codeOf(raw)).resolves.toBe('blocked_address');
    expect(lookups).toEqual([]);
  });

  it.each(hostileNames)('rejects %s, which resolves to a non-public address', async (raw) => {
    await expect(codeOf(raw)).resolves.toBe('blocked_address');
    expect(lookups).toHaveLength(1);
  });

  it.each(['https://nowhere.test/', 'https://garbage.test/', 'https://empty.test/'])(
    'reports dns_error for %s',
    async (raw) => {
      await expect(codeOf(raw)).resolves.toBe('dns_error');
    },
  );

  it.each([
    'https://8.8.8.8/',
    'https://[2606:4700::1111]/',
    'https://public.test/hooks?x=1',
    'https://[::ffff:8.8.8.8]/',
    'https://[64:ff9b::8.8.8.8]/',
    'https://1.1.1.1:8443/',
  ])('accepts public target %s', async (raw) => {
    await expect(codeOf(raw)).resolves.toBe('ok');
  });

  it('returns the checked addresses, without brackets for IPv6 literals', async () => {
    await expect(check('https://[2606:4700::1111]/')).resolves.toEqual({
      hostname: '2606:4700::1111',
      literal: true,
      addresses: [{ address: '2606:4700::1111', family: 6 }],
    });
    const target = await check('https://public.test/');
    expect(target.literal).toBe(false);
    expect(target.addresses.map((a) => a.family)).toEqual([4, 6]);
  });

  it('allowPrivate skips the policy but still resolves', async () => {
    await expect(check('https://internal.test/', true)).resolves.toMatchObject({
      addresses: [{ address: '10.0.0.7', family: 4 }],
    });
    await expect(check('https://127.0.0.1/', true)).resolves.toMatchObject({ literal: true });
  });

  it('DNS rebinding: the answer at creation does not vouch for the next lookup', async () => {
    const answers = ['93.184.215.14', '127.0.0.1'];
    const rebinding: LookupFn = async () => [
      { address: answers.shift() ?? '127.0.0.1', family: 4 },
    ];
    const url = new URL('https://rebind.test/');
    await expect(checkUrlTarget(url, { lookup: rebinding })).resolves.toMatchObject({
      addresses: [{ address: '93.184.215.14' }],
    });
    await expect(checkUrlTarget(url, { lookup: rebinding })).rejects.toMatchObject({
      code: 'blocked_address',
    });
  });

  it('an aborted signal abandons a hanging lookup', async () => {
    const hanging: LookupFn = () => new Promise(() => undefined);
    const signal = AbortSignal.timeout(20);
    await expect(
      checkUrlTarget(new URL('https://slow.test/'), { lookup: hanging, signal }),
    ).rejects.toMatchObject({
      name: 'TimeoutError',
    });
  });
});
