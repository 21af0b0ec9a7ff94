import { parseWebhookUrl } from './url-policy';

describe('WHATWG URL normalises IPv4 spellings before the policy sees them', () => {
  it.each([
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f000001/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
  ])('%s → %s', (raw, hostname) => {
    expect(new URL(raw).hostname).toBe(hostname);
  });
});

describe('parseWebhookUrl', () => {
  it.each([
    [42, 'not_a_string'],
    ['http://8.8.8.8/', 'not_https'],
    ['ftp://example.com/', 'not_https'],
    ['javascript:alert(1)', 'not_https'],
    ['file:///etc/passwd', 'not_https'],
    ['//example.com/hook', 'invalid_url'],
    ['/hook', 'invalid_url'],
    ['https://', 'invalid_url'],
    ['https://user:pass@example.com/', 'has_credentials'],
    ['https://user@example.com/', 'has_credentials'],
    ['https://:pw@example.com/', 'has_credentials'],
    [`https://example.com/${'a'.repeat(2030)}`, 'too_long'],
    ['https://exa mple.com/', 'invalid_url'],
    ['https://[::1/', 'invalid_url'],
  ])('rejects %p (%s)', (raw, reason) => {
    expect(parseWebhookUrl(raw)).toMatchObject({ ok: false, reason });
  });

  it('accepts an absolute https URL up to 2048 characters', () => {
    const raw = `https://example.com/${'a'.repeat(2048 - 20)}`;
    expect(raw).toHaveLength(2048);
    expect(parseWebhookUrl(raw)).toMatchObject({ ok: true });
    expect(parseWebhookUrl('https://hooks.example.com:8443/in?x=1')).toMatchObject({ ok: true });
  });
});
