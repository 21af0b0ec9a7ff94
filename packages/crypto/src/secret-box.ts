import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Format version: the first field of every token. A new format gets a new version. */
export const SECRET_BOX_VERSION = 'v1';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Key ids travel inside tokens, so they must not contain the `.` separator. */
const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** One encryption key and the id stored next to everything it encrypts. */
export interface SecretKey {
  id: string;
  /** Exactly 32 bytes. */
  key: Buffer;
}

/** A token could not be decrypted: malformed, unknown key id, wrong context or tampered. */
export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

/**
 * Authenticated encryption of small secrets at rest with AES-256-GCM.
 *
 * Tokens read `v1.<keyId>.<base64url(iv | tag | ciphertext)>` with a fresh random 12-byte IV
 * per encryption. New tokens always use the active key; decryption picks the key named in the
 * token, so keys can be rotated by adding a new active key and re-encrypting at leisure.
 *
 * `context` names the row a secret belongs to (e.g. tenant and subscription id). It is
 * authenticated as additional data, never stored: a token copied to another row, or read
 * with another context, fails to decrypt instead of yielding someone else's secret.
 */
export class SecretBox {
  private readonly keys: ReadonlyMap<string, Buffer>;

  constructor(
    keys: readonly SecretKey[],
    readonly activeKeyId: string,
  ) {
    const map = new Map<string, Buffer>();
    for (const { id, key } of keys) {
      if (!KEY_ID.test(id)) throw new TypeError(`invalid key id ${JSON.stringify(id)}`);
      if (key.length !== KEY_BYTES) throw new RangeError(`key ${id} must be ${KEY_BYTES} bytes`);
      if (map.has(id)) throw new TypeError(`duplicate key id ${id}`);
      map.set(id, Buffer.from(key));
    }
    if (!map.has(activeKeyId)) throw new TypeError(`active key ${activeKeyId} is not configured`);
    this.keys = map;
  }

  /** Encrypts `plaintext` (UTF-8) under the active key, bound to `context`. */
  encrypt(plaintext: string, context: string): string {
    const key = this.keys.get(this.activeKeyId) as Buffer;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(this.activeKeyId, context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const payload = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
    return `${SECRET_BOX_VERSION}.${this.activeKeyId}.${payload.toString('base64url')}`;
  }

  /**
   * Decrypts a token made by {@link encrypt} with the same `context`.
   * @throws SecretBoxError for any failure; the message never includes key material.
   */
  decrypt(token: string, context: string): string {
    const [version, keyId, encoded, extra] = token.split('.');
    if (version !== SECRET_BOX_VERSION || !keyId || !encoded || extra !== undefined) {
      throw new SecretBoxError('not a secret box token');
    }
    const key = this.keys.get(keyId);
    if (!key) throw new SecretBoxError(`unknown key id ${keyId}`);
    if (!BASE64URL.test(encoded)) throw new SecretBoxError('malformed secret box token');
    const payload = Buffer.from(encoded, 'base64url');
    if (payload.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('token too short');
    const decipher = createDecipheriv(ALGORITHM, key, payload.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(aad(keyId, context));
    decipher.setAuthTag(payload.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      const plain = Buffer.concat([
        decipher.update(payload.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
      return plain.toString('utf8');
    } catch {
      throw new SecretBoxError('secret box token failed authentication');
    }
  }

  /** The key id a token was encrypted with (to find rows still under a retired key). */
  static keyIdOf(token: string): string | undefined {
    const [version, keyId] = token.split('.');
    return version === SECRET_BOX_VERSION ? keyId : undefined;
  }
}

/** The version and key id are authenticated too, so no header field can be swapped. */
function aad(keyId: string, context: string): Buffer {
  return Buffer.from(`${SECRET_BOX_VERSION}.${keyId}.${context}`, 'utf8');
}

/** Builds a {@link SecretBox}; `activeKeyId` must be one of `keys`. */
export function createSecretBox(keys: readonly SecretKey[], activeKeyId: string): SecretBox {
  return new SecretBox(keys, activeKeyId);
}
