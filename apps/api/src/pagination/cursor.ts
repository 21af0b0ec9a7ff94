import { createHmac, timingSafeEqual } from 'node:crypto';
import type { KeysetPosition } from '@switchboard/db';
import { invalidCursor } from '../errors';

/**
 * Lists whose cursors are interchangeable share a family (both call lists use `calls`).
 * The family and the tenant are bound into the signature but not stored in the cursor, so
 * a cursor holds only the position yet is refused by any other tenant or list.
 */
export type CursorFamily =
  | 'calls'
  | 'receptionists'
  | 'webhooks'
  | 'deliveries'
  | 'sms'
  | 'sms-opt-outs'
  | 'leads'
  | 'campaigns'
  | 'campaign-recipients'
  | 'portal-sessions'
  | 'events';

const MAC_BYTES = 16;

export class CursorCodec {
  constructor(private readonly secret: string) {}

  private mac(family: CursorFamily, tenantId: string, payload: string): Buffer {
    return createHmac('sha256', this.secret)
      .update(`${family}\n${tenantId}\n${payload}`)
      .digest()
      .subarray(0, MAC_BYTES);
  }

  encode(family: CursorFamily, tenantId: string, position: KeysetPosition): string {
    const payload = Buffer.from(JSON.stringify([position.t, position.id])).toString('base64url');
    return `${payload}.${this.mac(family, tenantId, payload).toString('base64url')}`;
  }

  /** Decodes and verifies a cursor; anything else is a 400 invalid_cursor. */
  decode(family: CursorFamily, tenantId: string, cursor: string): KeysetPosition {
    const [payload, sig, extra] = cursor.split('.');
    if (!payload || !sig || extra !== undefined) throw invalidCursor();
    const given = Buffer.from(sig, 'base64url');
    const expected = this.mac(family, tenantId, payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw invalidCursor();
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalidCursor();
    }
    if (
      !Array.isArray(parsed) ||
      parsed.length !== 2 ||
      !Number.isSafeInteger(parsed[0]) ||
      typeof parsed[1] !== 'string'
    ) {
      throw invalidCursor();
    }
    return { t: parsed[0] as number, id: parsed[1] as string };
  }
}
