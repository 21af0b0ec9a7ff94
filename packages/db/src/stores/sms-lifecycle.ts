import type { Knex } from 'knex';
import { newId } from '../ids';
import { runPrepared } from '../prepared';
import { SMS_COLUMNS, smsColumnList, toSms, type SmsRow } from './sms-rows';
import {
  smsErrorMessage,
  type NewInboundSms,
  type NewOutboundSms,
  type Sms,
  type SmsReceipt,
} from './sms-types';
import { ago } from './older-than';

const TABLE = 'sms_messages';

/** True when the row's recipient opted out of the row's tenant. */
const OPTED_OUT = `EXISTS (SELECT 1 FROM sms_opt_outs o
  WHERE o.tenant_id = s.tenant_id AND o.phone = s.to_number AND o.opted_out)`;

/** The opt-out confirmation is the one message that goes to a number that opted out. */
const BLOCKED = `(s.reply_kind IS DISTINCT FROM 'opt_out' AND ${OPTED_OUT})`;

/**
 * The SET of a step that takes a message to `next`, or to `stopped` with the error
 * `recipient_opted_out` (its message is the statement's first parameter) when it is BLOCKED.
 */
const unlessOptedOut = (next: string, stopped: string) => `
            SET status = CASE WHEN ${BLOCKED} THEN '${stopped}' ELSE '${next}' END,
                error_code = CASE WHEN ${BLOCKED} THEN 'recipient_opted_out' END,
                error_message = CASE WHEN ${BLOCKED} THEN ? END,
                failed_at = CASE WHEN ${BLOCKED} THEN now() END,
                updated_at = now()`;

/**
 * The insert behind POST /sms/send, campaigns and keyword replies: a queued (or, with a
 * future send_at, scheduled) message from the tenant's ready receptionist (its number
 * becomes `from`) to a recipient who has not opted out of the tenant (an opt_out reply
 * excepted), unless the Idempotency-Key already holds a message. Result columns are named.
 */
const CREATE_OUTBOUND = `
  INSERT INTO sms_messages (id, tenant_id, receptionist_id, direction, status, from_number,
    to_number, message, segments, campaign_id, metadata, created_at, updated_at,
    idempotency_key, idempotency_fingerprint, send_at, reply_kind, livemode)
  SELECT $1, r.tenant_id, r.id, 'outbound',
         CASE WHEN $12::timestamptz IS NULL THEN 'queued' ELSE 'scheduled' END,
         r.phone_number, $2, $3, $4, $5, $6::jsonb, $7, $7, $8, $9, $12::timestamptz, $13::text,
         $14::boolean
    FROM receptionists r
   WHERE r.id = $10 AND r.tenant_id = $11 AND r.status = 'ready' AND r.phone_number IS NOT NULL
     AND ($13::text IS NOT DISTINCT FROM 'opt_out' OR NOT EXISTS (SELECT 1 FROM sms_opt_outs o
                      WHERE o.tenant_id = r.tenant_id AND o.phone = $2 AND o.opted_out))
  ON CONFLICT DO NOTHING
  RETURNING ${smsColumnList()}`;

const rowsOf = (result: unknown): Sms[] => (result as { rows: SmsRow[] }).rows.map(toSms);

/**
 * The SMS lifecycle: every transition of a message, one statement each, the caller's
 * transaction first (the caller emits the transition's event in that same transaction):
 *
 *   outbound: insert ─▶ scheduled ─release─▶ queued        (release when opted out: cancelled)
 *                         └─cancel─▶ cancelled
 *             insert ─▶ queued ─claim─▶ sending ─markSent─▶ sent ─receipt─▶ delivered
 *                         │                 │                  └─receipt─▶ undelivered
 *                         └─claim (opted out)─┴─markFailed / failInterrupted─▶ failed
 *   inbound:  insertInbound ─▶ received
 *
 * Invariant: statuses only move forward. Every update is conditional on the status it
 * leaves, so a late or repeated signal (a second receipt, a `sent` after `delivered`, a
 * worker's answer after the reconciler failed the send) changes nothing and reports so
 * (undefined / empty), and the caller emits nothing for it.
 */
export class SmsLifecycle {
  /** Insert (queued or scheduled) under an id the caller chose; undefined when refused. */
  async insertOutbound(db: Knex, id: string, input: NewOutboundSms): Promise<Sms | undefined> {
    // A named prepared statement: planned once per connection (the request's hot statement).
    const [row] = await runPrepared<SmsRow>(db, 'sms_create_outbound_v3', CREATE_OUTBOUND, [
      id,
      input.to,
      input.message,
      input.segments,
      input.campaignId ?? null,
      JSON.stringify(input.metadata),
      input.at,
      input.idempotency?.key ?? null,
      input.idempotency?.fingerprint ?? null,
      input.receptionistId,
      input.tenantId,
      input.sendAt ?? null,
      input.replyKind ?? null,
      input.livemode ?? true,
    ]);
    return row && toSms(row);
  }

  /** Insert `received`; undefined when the carrier's message id is stored already (duplicate). */
  async insertInbound(db: Knex, input: NewInboundSms): Promise<Sms | undefined> {
    const rows = (await db(TABLE)
      .insert({
        id: newId('sms'),
        tenant_id: input.tenantId,
        receptionist_id: input.receptionistId,
        direction: 'inbound',
        status: 'received',
        from_number: input.from,
        to_number: input.to,
        message: input.message,
        segments: input.segments,
        provider_message_id: input.providerMessageId,
        received_at: input.receivedAt,
      })
      .onConflict()
      .ignore()
      .returning([...SMS_COLUMNS])) as SmsRow[];
    return rows[0] && toSms(rows[0]);
  }

  /**
   * scheduled → queued for messages due now, or → cancelled (`recipient_opted_out`) when the
   * recipient opted out since they were scheduled. The caller enqueues the queued ones.
   */
  async release(db: Knex, limit: number): Promise<Sms[]> {
    return rowsOf(
      await db.raw(
        `UPDATE sms_messages s ${unlessOptedOut('queued', 'cancelled')}
          WHERE s.id IN (SELECT id FROM sms_messages WHERE status = 'scheduled' AND send_at <= now()
                          ORDER BY send_at LIMIT ? FOR UPDATE SKIP LOCKED)
            AND s.status = 'scheduled'
          RETURNING ${smsColumnList('s')}`,
        [smsErrorMessage('recipient_opted_out'), limit],
      ),
    );
  }

  /**
   * scheduled → cancelled by the tenant; undefined when it is not the tenant's scheduled
   * message (of mode `livemode`, when given: docs/API.md, Test mode).
   */
  async cancel(
    db: Knex,
    tenantId: string,
    id: string,
    livemode?: boolean,
  ): Promise<Sms | undefined> {
    const [row] = (await db(TABLE)
      .where({ tenant_id: tenantId, id, status: 'scheduled' })
      .modify((q) => {
        if (livemode !== undefined) q.andWhere('livemode', livemode);
      })
      .update({ status: 'cancelled', failed_at: db.fn.now(), updated_at: db.fn.now() })
      .returning([...SMS_COLUMNS])) as SmsRow[];
    return row && toSms(row);
  }

  /**
   * The sender's claim: queued → sending, so at most one claimer ever wins and a message is
   * handed to the provider at most once; → failed (`recipient_opted_out`) instead when the
   * recipient opted out since it was accepted. Commit it durably before the hand-off.
   */
  async claim(db: Knex, id: string): Promise<Sms | undefined> {
    const [sms] = rowsOf(
      await db.raw(
        `UPDATE sms_messages s ${unlessOptedOut('sending', 'failed')}
          WHERE s.id = ? AND s.status = 'queued' AND s.direction = 'outbound'
          RETURNING ${smsColumnList('s')}`,
        [smsErrorMessage('recipient_opted_out'), id],
      ),
    );
    return sms;
  }

  /** sending → sent (the caller emits `sms.sent`, then applies a receipt that came early). */
  async markSent(
    db: Knex,
    id: string,
    outcome: { sentAt: Date; providerMessageId: string },
  ): Promise<Sms | undefined> {
    const [row] = (await db(TABLE)
      .where({ id, status: 'sending' })
      .update({
        status: 'sent',
        sent_at: outcome.sentAt,
        provider_message_id: outcome.providerMessageId,
        updated_at: db.fn.now(),
      })
      .returning([...SMS_COLUMNS])) as SmsRow[];
    return row && toSms(row);
  }

  /** sending → failed with the reason (the caller emits `sms.failed`). */
  async markFailed(db: Knex, id: string, errorCode: string): Promise<Sms | undefined> {
    const [row] = (await db(TABLE)
      .where({ id, status: 'sending' })
      .update({
        status: 'failed',
        error_code: errorCode,
        error_message: smsErrorMessage(errorCode),
        failed_at: db.fn.now(),
        updated_at: db.fn.now(),
      })
      .returning([...SMS_COLUMNS])) as SmsRow[];
    return row && toSms(row);
  }

  /**
   * sending → failed (`send_interrupted`) for messages claimed longer than `staleMs` ago: the
   * worker that claimed them died before it recorded the provider's answer. Never handed
   * over again (at most once), so whether the carrier got them is unknown.
   */
  async failInterrupted(db: Knex, staleMs: number, limit: number): Promise<Sms[]> {
    const rows = (await db(TABLE)
      .whereIn(
        'id',
        db(TABLE)
          .select('id')
          .where('status', 'sending')
          .andWhere('updated_at', '<', ago(db, staleMs))
          .orderBy('updated_at')
          .limit(limit),
      )
      .andWhere('status', 'sending')
      .update({
        status: 'failed',
        error_code: 'send_interrupted',
        error_message: smsErrorMessage('send_interrupted'),
        failed_at: db.fn.now(),
        updated_at: db.fn.now(),
      })
      .returning([...SMS_COLUMNS])) as SmsRow[];
    return rows.map(toSms);
  }

  /**
   * sent → delivered | undelivered by a carrier receipt, matched by the receptionist and the
   * carrier's message id (so another tenant's message is never found). Undefined when no
   * sent message matches: a duplicate, an unknown id, or a receipt early for its message.
   */
  async applyReceipt(db: Knex, receipt: SmsReceipt): Promise<Sms | undefined> {
    const delivered = receipt.status === 'delivered';
    const code = delivered ? null : (receipt.errorCode ?? 'undelivered');
    // Never before `sent_at`: a carrier's clock (or an early receipt) cannot reorder the story.
    const at = db.raw('GREATEST(?::timestamptz, sent_at)', [receipt.occurredAt]);
    const [row] = (await db(TABLE)
      .where({
        receptionist_id: receipt.receptionistId,
        provider_message_id: receipt.providerMessageId,
        direction: 'outbound',
        status: 'sent',
      })
      .update({
        status: receipt.status,
        delivered_at: delivered ? at : null,
        failed_at: delivered ? null : at,
        error_code: code,
        error_message: code && smsErrorMessage(code),
        updated_at: db.fn.now(),
      })
      .returning([...SMS_COLUMNS])) as SmsRow[];
    return row && toSms(row);
  }

  /**
   * Keeps a receipt that found no sent message, for `applyHeldReceipt` once its message is
   * marked sent. A second copy of one receipt is kept once.
   */
  async holdReceipt(db: Knex, receipt: SmsReceipt): Promise<void> {
    await db('sms_pending_receipts')
      .insert({
        receptionist_id: receipt.receptionistId,
        provider_message_id: receipt.providerMessageId,
        status: receipt.status,
        error_code: receipt.errorCode,
        occurred_at: receipt.occurredAt,
      })
      .onConflict(['receptionist_id', 'provider_message_id'])
      .ignore();
  }

  /** The held receipt of a message now sent, taken (deleted) in the caller's transaction. */
  async takeHeldReceipt(db: Knex, sms: Sms): Promise<SmsReceipt | undefined> {
    if (!sms.providerMessageId) return undefined;
    const [row] = (await db('sms_pending_receipts')
      .where({ receptionist_id: sms.receptionistId, provider_message_id: sms.providerMessageId })
      .delete()
      .returning(['status', 'error_code', 'occurred_at'])) as Array<{
      status: 'delivered' | 'undelivered';
      error_code: string | null;
      occurred_at: Date;
    }>;
    return (
      row && {
        receptionistId: sms.receptionistId,
        providerMessageId: sms.providerMessageId,
        status: row.status,
        errorCode: row.error_code,
        occurredAt: row.occurred_at,
      }
    );
  }

  /**
   * Sent messages with a held receipt: a receipt committed while its message's `sent` was
   * being committed saw no message and was held after `markSent` looked. A repair path.
   */
  async sentWithHeldReceipt(db: Knex, limit: number): Promise<Sms[]> {
    return rowsOf(
      await db.raw(
        `SELECT ${smsColumnList('s')} FROM sms_pending_receipts p
           JOIN sms_messages s ON s.receptionist_id = p.receptionist_id
            AND s.provider_message_id = p.provider_message_id AND s.direction = 'outbound'
          WHERE s.status = 'sent' ORDER BY p.created_at LIMIT ?`,
        [limit],
      ),
    );
  }
}
