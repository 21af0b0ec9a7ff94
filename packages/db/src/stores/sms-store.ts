import type { Knex } from 'knex';
import { newId } from '../ids';
import { keysetPage, type KeysetPage, type KeysetPosition } from '../keyset';
import { runPrepared } from '../prepared';
import { SMS_COLUMNS, smsColumnList, toSms, type SmsRow } from './sms-rows';
import type { NewInboundSms, NewOutboundSms, SendRefusal, Sms, SmsFilters } from './sms-types';

const TABLE = 'sms_messages';

/** True when the phone opted out of the tenant's SMS (the row's own tenant and `to`). */
const OPTED_OUT = `EXISTS (SELECT 1 FROM sms_opt_outs o
  WHERE o.tenant_id = s.tenant_id AND o.phone = s.to_number AND o.opted_out)`;

/**
 * The insert behind POST /sms/send: a queued message from the tenant's ready receptionist (its
 * number becomes `from`) to a recipient who has not opted out of the tenant, unless the
 * Idempotency-Key already holds a message. Result columns are named (a later column does not
 * invalidate the plans prepared on running connections).
 */
const CREATE_OUTBOUND = `
  INSERT INTO sms_messages (id, tenant_id, receptionist_id, direction, status, from_number,
    to_number, message, segments, campaign_id, metadata, created_at, updated_at,
    idempotency_key, idempotency_fingerprint)
  SELECT $1, r.tenant_id, r.id, 'outbound', 'queued', r.phone_number, $2, $3, $4, $5, $6::jsonb,
         $7, $7, $8, $9
    FROM receptionists r
   WHERE r.id = $10 AND r.tenant_id = $11 AND r.status = 'ready' AND r.phone_number IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM sms_opt_outs o
                      WHERE o.tenant_id = r.tenant_id AND o.phone = $2 AND o.opted_out)
  ON CONFLICT DO NOTHING
  RETURNING ${smsColumnList()}`;

const ago = (db: Knex, ms: number) => db.raw('now() - make_interval(secs => ?)', [ms / 1000]);

/**
 * The SMS lifecycle, one statement per transition: accepted (`queued`), claimed for the
 * provider (`sending`), `sent` or `failed`; inbound messages are stored `received`.
 * Transitions that go with an outbox event take the caller's transaction first.
 */
export class SmsStore {
  constructor(private readonly db: Knex) {}

  /**
   * Stores a queued outbound message from the tenant's ready receptionist (its number becomes
   * `from`) to a recipient who has not opted out of the tenant, in one autocommit statement.
   * With an Idempotency-Key the uniqueness trigger on (tenant_id, idempotency_key) turns a
   * second insert within the key's 24 hours into a no-op and the message holding the key is returned with `created: false`.
   * Undefined when nothing was stored and no message holds the key (`whyNotSendable` says why).
   */
  async createOutbound(input: NewOutboundSms): Promise<{ sms: Sms; created: boolean } | undefined> {
    const sms = await this.insertOutbound(this.db, newId('sms'), input);
    if (sms) return { sms, created: true };
    // A conflict waited for the key's holder to commit, so that message is visible now.
    const existing =
      input.idempotency && (await this.findByIdempotencyKey(input.tenantId, input.idempotency.key));
    return existing ? { sms: existing, created: false } : undefined;
  }

  /**
   * The insert behind `createOutbound` under an id the caller chose, inside the caller's
   * transaction (`db`) or on the pool: a campaign stores a recipient's message in the
   * transaction that claims the recipient. Undefined when nothing was stored (the
   * receptionist is not ready, the recipient opted out, or the Idempotency-Key is held).
   */
  async insertOutbound(db: Knex, id: string, input: NewOutboundSms): Promise<Sms | undefined> {
    // A named prepared statement: planned once per connection (the request's hot statement).
    const [row] = await runPrepared<SmsRow>(db, 'sms_create_outbound', CREATE_OUTBOUND, [
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
    ]);
    return row && toSms(row);
  }

  /** Why `createOutbound` stored nothing; null when nothing stands in the way (any more). */
  async whyNotSendable(
    tenantId: string,
    receptionistId: string,
    to: string,
  ): Promise<SendRefusal | null> {
    const row = (await this.db('receptionists as r')
      .select('r.status', 'r.phone_number')
      .select(
        this.db.raw(
          'EXISTS (SELECT 1 FROM sms_opt_outs o WHERE o.tenant_id = r.tenant_id AND o.phone = ? AND o.opted_out) AS opted_out',
          [to],
        ),
      )
      .where({ 'r.id': receptionistId, 'r.tenant_id': tenantId })
      .first()) as { status: string; phone_number: string | null; opted_out: boolean } | undefined;
    if (!row) return 'unknown_receptionist';
    if (row.status !== 'ready' || !row.phone_number) return 'receptionist_not_ready';
    return row.opted_out ? 'recipient_opted_out' : null;
  }

  async findByIdempotencyKey(tenantId: string, key: string): Promise<Sms | undefined> {
    const row = (await this.db(TABLE)
      .select(SMS_COLUMNS)
      .where({ tenant_id: tenantId, idempotency_key: key })
      .orderBy('created_at', 'desc') // a key reused after its 24 hours holds the newest message
      .first()) as SmsRow | undefined;
    return row && toSms(row);
  }

  /** The tenant's message, or undefined (another tenant's id is simply not found). */
  async get(tenantId: string, id: string): Promise<Sms | undefined> {
    const row = (await this.db(TABLE)
      .select(SMS_COLUMNS)
      .where({ tenant_id: tenantId, id })
      .first()) as SmsRow | undefined;
    return row && toSms(row);
  }

  /** Any tenant's message by id: for the worker, which acts on ids from its own jobs. */
  async findById(id: string, db: Knex = this.db): Promise<Sms | undefined> {
    const row = (await db(TABLE).select(SMS_COLUMNS).where({ id }).first()) as SmsRow | undefined;
    return row && toSms(row);
  }

  /** One page of a receptionist's messages, both directions, newest first by (created_at, id). */
  async listForReceptionist(
    tenantId: string,
    receptionistId: string,
    filters: SmsFilters,
    page: { limit: number; after?: KeysetPosition | null },
  ): Promise<KeysetPage<Sms>> {
    const q = this.db(TABLE)
      .select(SMS_COLUMNS)
      .where({ tenant_id: tenantId, receptionist_id: receptionistId });
    if (filters.direction) q.andWhere('direction', filters.direction);
    if (filters.from) q.andWhere('created_at', '>=', filters.from);
    if (filters.toExclusive) q.andWhere('created_at', '<', filters.toExclusive);
    const result = await keysetPage<SmsRow>(q, {
      timeColumn: 'created_at',
      idColumn: 'id',
      ...page,
      position: (r) => ({ t: r.created_at.getTime(), id: r.id }),
    });
    return { rows: result.rows.map(toSms), next: result.next };
  }

  /**
   * Stores an inbound message as `received` (inside the caller's transaction). Undefined when
   * the carrier's message id is already stored for this receptionist: a duplicate.
   */
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
   * The sender's claim: queued → sending, in one conditional UPDATE, so at most one claimer
   * ever wins and a message is handed to the provider at most once. A recipient who opted
   * out since the message was accepted is not sent to: the claim fails the message instead
   * (`recipient_opted_out`). Run it in a durably committing transaction: the claim must
   * survive a crash before the hand-off it guards. Undefined when gone or not queued.
   */
  async claimForSending(db: Knex, id: string): Promise<Sms | undefined> {
    const result = (await db.raw(
      `UPDATE sms_messages s
          SET status = CASE WHEN ${OPTED_OUT} THEN 'failed' ELSE 'sending' END,
              error_code = CASE WHEN ${OPTED_OUT} THEN 'recipient_opted_out' END,
              updated_at = now()
        WHERE s.id = ? AND s.status = 'queued' AND s.direction = 'outbound'
        RETURNING ${smsColumnList('s')}`,
      [id],
    )) as { rows: SmsRow[] };
    return result.rows[0] && toSms(result.rows[0]);
  }

  /** sending → sent (the caller emits `sms.sent` in the same transaction). */
  async markSent(
    db: Knex,
    id: string,
    outcome: { sentAt: Date; providerMessageId: string },
  ): Promise<Sms | undefined> {
    const rows = (await db(TABLE)
      .where({ id, status: 'sending' })
      .update({
        status: 'sent',
        sent_at: outcome.sentAt,
        provider_message_id: outcome.providerMessageId,
        updated_at: db.fn.now(),
      })
      .returning([...SMS_COLUMNS])) as SmsRow[];
    return rows[0] && toSms(rows[0]);
  }

  /** sending → failed with the reason; false when the message was no longer sending. */
  async markFailed(db: Knex, id: string, errorCode: string): Promise<boolean> {
    const n = await db(TABLE)
      .where({ id, status: 'sending' })
      .update({ status: 'failed', error_code: errorCode, updated_at: db.fn.now() });
    return n > 0;
  }

  /**
   * sending → failed (`send_interrupted`) for messages claimed longer than `staleMs` ago: the
   * worker that claimed them died before it recorded the provider's answer. They are never
   * handed over again (at most once), so whether the carrier got them is unknown. In the
   * caller's transaction, which settles the campaign recipients among them.
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
      .update({ status: 'failed', error_code: 'send_interrupted', updated_at: db.fn.now() })
      .returning([...SMS_COLUMNS])) as SmsRow[];
    return rows.map(toSms);
  }

  /** Outbound messages still queued `graceMs` after they were accepted, oldest first. */
  async queuedOlderThan(graceMs: number, limit: number): Promise<string[]> {
    const rows = (await this.db(TABLE)
      .select('id')
      .where('status', 'queued')
      .andWhere('updated_at', '<', ago(this.db, graceMs))
      .orderBy('updated_at')
      .limit(limit)) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }
}
