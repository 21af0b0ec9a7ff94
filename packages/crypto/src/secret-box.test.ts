import { createCipheriv, createDecipheriv } from 'node:crypto';
import { createSecretBox, SecretBox, SecretBoxError } from './secret-box';

const k1 = { id: 'k1', key: Buffer.alloc(32, 1) };
const k2 = { id: 'k2', key: Buffer.alloc(32, 2) };
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw7c5hKRkLCXw=';
const context = 'ten_1/0b7e5c1e-9f5a-4b7a-8a57-0f2d8c6f3d11';
const TOKEN = /^v1\.k1\.[A-Za-z0-9_-]+$/;

describe('SecretBox', () => {
  const box = createSecretBox([k1], 'k1');

  it('round-trips and writes v1.<keyId>.<base64url(iv|tag|ciphertext)>', () => {
    const token = box.encrypt(secret, context);
    expect(token).toMatch(TOKEN);
    expect(token).not.toContain(secret.slice(6, 20));
    expect(box.decrypt(token, context)).toBe(secret);
    const payload = Buffer.from(token.split('.')[2] as string, 'base64url');
    expect(payload.length).toBe(12 + 16 + Buffer.byteLength(secret));
  });

  it('is plain AES-256-GCM: an independent decryption with node:crypto agrees', () => {
    const token = box.encrypt(secret, context);
    const payload = Buffer.from(token.split('.')[2] as string, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', k1.key, payload.subarray(0, 12));
    decipher.setAAD(Buffer.from(`v1.k1.${context}`));
    decipher.setAuthTag(payload.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(payload.subarray(28)), decipher.final()]);
    expect(plain.toString('utf8')).toBe(secret);
  });

  it('uses a fresh IV every time', () => {
    const tokens = new Set(Array.from({ length: 50 }, () => box.encrypt(secret, context)));
    expect(tokens.size).toBe(50);
    const ivs = new Set(
      [...tokens].map((t) =>
        Buffer.from(t.split('.')[2] as string, 'base64url').toString('hex', 0, 12),
      ),
    );
    expect(ivs.size).toBe(50);
  });

  it('refuses a token read with another context (moved to another row)', () => {
    const token = box.encrypt(secret, context);
    expect(() => box.decrypt(token, 'ten_2/0b7e5c1e-9f5a-4b7a-8a57-0f2d8c6f3d11')).toThrow(
      SecretBoxError,
    );
    expect(() => box.decrypt(token, '')).toThrow(SecretBoxError);
  });

  it('refuses any tampered byte', () => {
    const token = box.encrypt(secret, context);
    const [v, id, encoded] = token.split('.') as [string, string, string];
    const payload = Buffer.from(encoded, 'base64url');
    for (let i = 0; i < payload.length; i++) {
      const copy = Buffer.from(payload);
      copy[i] = (copy[i] as number) ^ 0x01;
      expect(() => box.decrypt(`${v}.${id}.${copy.toString('base64url')}`, context)).toThrow(
        SecretBoxError,
      );
    }
  });

  it.each([
    [''],
    ['v1'],
    ['v1.k1'],
    ['v2.k1.AAAA'],
    ['v1.k9.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['v1.k1.AAAA'],
    ['v1.k1.not base64!'],
    ['v1.k1.AAAA.extra'],
  ])('refuses the malformed token %j', (token) => {
    expect(() => box.decrypt(token, context)).toThrow(SecretBoxError);
  });

  it('rotates: a new active key encrypts, old tokens still decrypt by their key id', () => {
    const old = box.encrypt(secret, context);
    const rotated = createSecretBox([k1, k2], 'k2');
    const fresh = rotated.encrypt(secret, context);
    expect(fresh).toMatch(/^v1\.k2\./);
    expect(SecretBox.keyIdOf(fresh)).toBe('k2');
    expect(SecretBox.keyIdOf(old)).toBe('k1');
    expect(rotated.decrypt(old, context)).toBe(secret);
    expect(rotated.decrypt(fresh, context)).toBe(secret);
    expect(() => box.decrypt(fresh, context)).toThrow(/unknown key id k2/);
  });

  it('refuses a token whose key id was swapped to another configured key', () => {
    const both = createSecretBox([k1, { id: 'k2', key: k1.key }], 'k1');
    const token = both.encrypt(secret, context);
    expect(() => both.decrypt(token.replace(/^v1\.k1\./, 'v1.k2.'), context)).toThrow(
      SecretBoxError,
    );
  });

  it('refuses a ciphertext made without the context as additional data', () => {
    const iv = Buffer.alloc(12, 9);
    const cipher = createCipheriv('aes-256-gcm', k1.key, iv);
    const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    const token = `v1.k1.${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url')}`;
    expect(() => box.decrypt(token, context)).toThrow(SecretBoxError);
  });

  it('validates its keys', () => {
    expect(() => createSecretBox([{ id: 'k1', key: Buffer.alloc(16) }], 'k1')).toThrow(RangeError);
    expect(() => createSecretBox([k1], 'k2')).toThrow(/not configured/);
    expect(() => createSecretBox([k1, k1], 'k1')).toThrow(/duplicate/);
    expect(() => createSecretBox([{ id: 'a.b', key: k1.key }], 'a.b')).toThrow(/invalid key id/);
  });

  it('keeps its own copy of the key', () => {
    const key = Buffer.alloc(32, 5);
    const own = createSecretBox([{ id: 'k1', key }], 'k1');
    const token = own.encrypt(secret, context);
    key.fill(0);
    expect(own.decrypt(token, context)).toBe(secret);
  });
});
