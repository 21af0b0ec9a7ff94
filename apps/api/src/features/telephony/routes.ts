import { Router } from 'express';
import { timingSafeEqual, createHash } from 'node:crypto';
import {
  applyTelephonyMessage,
  MESSAGE_SCHEMAS,
  NumberNotOwnedError,
  UnknownReceptionistError,
  type TelephonyMessage,
} from '@switchboard/telephony';
import { safeSmsText } from '@switchboard/sms';
import { enqueueFromRequest } from '@switchboard/queues';
import type { Deps } from '../../deps';
import { requireCarrierSignature } from './carrier-signature';
import { invalidParameter, unauthenticated, unprocessable } from '../../errors';
import { jsonBodyKeepingBytes } from '../../http/json-body';
import { compileValidator } from '../../http/validation';

const validators = new Map(
  Object.entries(MESSAGE_SCHEMAS).map(([type, schema]) => [type, compileValidator('body', schema)]),
);

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The ingestion route's path under its mount point (/internal/v1). */
export const TELEPHONY_EVENTS_PATH = '/telephony/events';

/**
 * Whether an Authorization field carries INGEST_TOKEN. Hashing first makes the comparison
 * constant-time whatever the field's length.
 */
export function ingestTokenCheck(token: string): (header: string | undefined) => boolean {
  const expected = digest(`Bearer ${token}`);
  return (header) => timingSafeEqual(digest(header ?? ''), expected);
}

/**
 * POST /internal/v1/telephony/events: the voice platform's reports (docs/API.md, Telephony ingestion).
 * Authenticated by INGEST_TOKEN, not an API key. 202 once committed; a replayed message id
 * is 200 `{accepted: false, duplicate: true}` and changes nothing.
 *
 * Invariant: with SMS_CARRIER_SIGNING_SECRET set, no `sms.inbound` or `sms.status` is applied
 * unless its exact body bytes carry the carrier's signature (403 otherwise, before the body
 * is validated), so INGEST_TOKEN alone cannot forge a tenant's texts or receipts
 * (docs/TELEPHONY.md, Who may report what).
 */
export function telephonyRouter(deps: Deps): Router {
  const accepts = ingestTokenCheck(deps.config.ingestToken);
  const router = Router();
  router.post(
    TELEPHONY_EVENTS_PATH,
    async (req, _res, next) => {
      if (!accepts(req.headers.authorization)) {
        // A wrong token takes a token of its address's bucket (429 once it is empty).
        await deps.anonymousLimits.count(req);
        throw unauthenticated('invalid_ingest_token', 'Send Authorization: Bearer $INGEST_TOKEN');
      }
      next();
    },
    jsonBodyKeepingBytes,
    deps.lifecycle.tracked(async (req, res) => {
      const body = (req.body ?? {}) as { type?: unknown };
      const validate = typeof body.type === 'string' ? validators.get(body.type) : undefined;
      if (!validate) {
        throw invalidParameter(
          'type',
          `type must be one of ${Object.keys(MESSAGE_SCHEMAS).join(', ')}`,
        );
      }
      requireCarrierSignature(deps, req, body.type as string);
      // A text message is a carrier's bytes, not our client's input: one holding NUL or an
      // unpaired surrogate is stored made safe rather than refused (refusing would lose it).
      const carrierText = body as { type: string; message?: unknown };
      if (carrierText.type === 'sms.inbound' && typeof carrierText.message === 'string') {
        carrierText.message = safeSmsText(carrierText.message);
      }
      const message = validate(body) as TelephonyMessage;
      try {
        const result = await applyTelephonyMessage(deps, message);
        if (result.duplicate) {
          res.status(200).json({ accepted: false, duplicate: true });
          return;
        }
        if ('receipt' in result && result.receipt === 'ignored') {
          // Accepted (never an error to the carrier): repeated, early (held until the
          // message is sent), or for no message of this receptionist.
          deps.logger.info(
            { receptionistId: message.receptionist_id, messageId: message.id },
            'SMS receipt moved no message',
          );
        }
        if ('replySmsId' in result && result.replySmsId)
          await enqueueReply(deps, result.replySmsId);
        res.status(202).json({ accepted: true });
      } catch (err) {
        if (err instanceof UnknownReceptionistError) {
          throw unprocessable('unknown_receptionist', err.message, 'receptionist_id');
        }
        // An inbound SMS to a number its receptionist does not own: the same answer as an
        // unknown receptionist (no receptionist of ours is reachable there), naming `to`.
        if (err instanceof NumberNotOwnedError) {
          throw unprocessable('unknown_receptionist', err.message, 'to');
        }
        throw err;
      }
    }),
  );
  return router;
}

/** The keyword reply's send job, after the commit; the SMS reconciler adds it if this fails. */
async function enqueueReply(deps: Deps, smsId: string): Promise<void> {
  try {
    await enqueueFromRequest(deps.queues, deps.redis, 'sms', { data: { v: 1, smsId } });
  } catch (err) {
    deps.logger.warn({ err, smsId }, 'reply job not added; the SMS reconciler will enqueue it');
  }
}
