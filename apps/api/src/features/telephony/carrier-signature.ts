import type { Request } from 'express';
import {
  CARRIER_SIGNATURE_HEADER,
  CARRIER_SIGNED_TYPES,
  CARRIER_TIMESTAMP_HEADER,
  verifyCarrierSignature,
} from '@switchboard/telephony';
import type { Deps } from '../../deps';
import { ApiError } from '../../errors';
import { rawBody } from '../../http/json-body';

/**
 * Throws 403 `invalid_carrier_signature` when SMS_CARRIER_SIGNING_SECRET is set and a
 * carrier's message (`sms.inbound`, `sms.status`) lacks a valid signature over its exact body
 * bytes (read by `jsonBodyKeepingBytes`). Other messages, or no secret set: nothing to check.
 * The caller has checked INGEST_TOKEN already, so a refusal here means the token leaked or the
 * carrier is misconfigured: logged as a warning.
 */
export function requireCarrierSignature(
  deps: Pick<Deps, 'config' | 'logger'>,
  req: Request,
  type: string,
): void {
  const secrets = deps.config.carrierSigningSecrets;
  if (secrets.length === 0 || !CARRIER_SIGNED_TYPES.has(type)) return;
  const check = verifyCarrierSignature(
    secrets,
    {
      timestamp: req.headers[CARRIER_TIMESTAMP_HEADER],
      signature: req.headers[CARRIER_SIGNATURE_HEADER],
    },
    rawBody(req),
  );
  if (check.ok) return;
  deps.logger.warn(
    { type, reason: check.reason },
    'telephony message refused: no valid carrier signature',
  );
  throw new ApiError(
    403,
    'permission_error',
    'invalid_carrier_signature',
    `${type} messages must be signed by the carrier: ${check.reason} (X-Carrier-Signature: ` +
      'hex HMAC-SHA256 of X-Carrier-Timestamp + "." + the body, keyed by SMS_CARRIER_SIGNING_SECRET)',
  );
}
