import { randomBytes } from 'node:crypto';
import { createSecretBox, SecretBoxError } from '@switchboard/crypto';
import { openSecret } from './opened-secrets';

const box = () => createSecretBox([{ id: 'k1', key: randomBytes(32) }], 'k1');

it('opens a sealed secret as decrypt does, and opens it once', () => {
  const b = box();
  const token = b.encrypt('whsec_one', 'subs/t/1');
  const decrypt = jest.spyOn(b, 'decrypt');
  expect(openSecret(b, token, 'subs/t/1')).toBe('whsec_one');
  expect(openSecret(b, token, 'subs/t/1')).toBe('whsec_one');
  expect(decrypt).toHaveBeenCalledTimes(1);
});

it('never answers a token under another context, and keeps no failure', () => {
  const b = box();
  const token = b.encrypt('whsec_one', 'subs/t/1');
  expect(openSecret(b, token, 'subs/t/1')).toBe('whsec_one');
  // The same token read for another row fails as decrypt does, every time.
  expect(() => openSecret(b, token, 'subs/t/2')).toThrow(SecretBoxError);
  expect(() => openSecret(b, token, 'subs/t/2')).toThrow(SecretBoxError);
});

it('a rotated secret is a new token: the new secret, not the memo of the old one', () => {
  const b = box();
  const before = b.encrypt('whsec_old', 'subs/t/1');
  const after = b.encrypt('whsec_new', 'subs/t/1');
  expect(openSecret(b, before, 'subs/t/1')).toBe('whsec_old');
  expect(openSecret(b, after, 'subs/t/1')).toBe('whsec_new');
});

it('keys of another box are not shared', () => {
  const a = box();
  const b = box();
  const token = a.encrypt('whsec_one', 'subs/t/1');
  expect(openSecret(a, token, 'subs/t/1')).toBe('whsec_one');
  expect(() => openSecret(b, token, 'subs/t/1')).toThrow(SecretBoxError);
});
