import type { Knex } from 'knex';
import { newId } from '../ids';
import { newestFirst, type KeysetPage, type PageRequest } from '../keyset';
import type { SmsLifecycle } from './sms-lifecycle';
import { SMS_COLUMNS, toSms, type SmsRow } from './sms-rows';
import type { NewOutboundSms, SendRefusal, Sms, SmsFilters } from './sms-types';
import { idsOlderThan } from './older-than';

const TABLE = 'sms_messages';

/**
 * SMS reads, and the accepting insert of POST /sms/send. Every transition of a message is a
 * statement of the SMS lifecycle (sms-lifecycle.ts).
 */
export class SmsStore {
  constructor(
    private readonly db: Knex,
    private readonly lifecycle: SmsLifecycle,
  ) {}

  /**
   * Stores a queued outbound message from the tenant's ready receptionist (its number becomes
   * `from`) to a recipient who has not opted out of the tenant, in one autocommit statement.
   * With an Idempotency-Key the uniqueness trigger on (tenant_id, idempotency_key) turns a
   * second insert within the key's 24 hours into a no-op and the message holding the key is returned with `created: false`.
   * Undefined when nothing was stored and no message holds the key (`whyNotSendable` says why).
   */
  async createOutbound(input: NewOutboundSms): Promise<{ sms: Sms; created: boolean } | undefined> {
    const sms = await this.lifecycle.insertOutbound(this.db, newId('sms'), input);
    if (sms) return { sms, created: true };
    // A conflict waited for the key's holder to commit, so that message is visible now.
    const existing =
      input.idempotency && (await this.findByIdempotencyKey(input.tenantId, input.idempotency.key));
    return existing ? { sms: existing, created: false } : undefined;
  }

  /**
   * Why `createOutbound` stored nothing; null when nothing stands in the way (any more). On
   * `db`: the pool, or the caller's open transaction (never the pool from inside one).
   */
  async whyNotSendable(
    db: Knex,
    tenantId: string,
    receptionistId: string,
    to: string,
  ): Promise<SendRefusal | null> {
    const row = (await db('receptionists as r')
      .select('r.status', 'r.phone_number')
      .select(
        db.raw(
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

  /**
   * The tenant's message, or undefined (another tenant's id is simply not found, nor, when
   * `livemode` is given, a message of the other mode: docs/API.md, Test mode).
   */
  async get(tenantId: string, id: string, livemode?: boolean): Promise<Sms | undefined> {
    const q = this.db(TABLE).select(SMS_COLUMNS).where({ tenant_id: tenantId, id });
    if (livemode !== undefined) q.andWhere('livemode', livemode);
    const row = (await q.first()) as SmsRow | undefined;
    return row && toSms(row);
  }

  /** Any tenant's message by id: for the worker, which acts on ids from its own jobs. */
  async findById(db: Knex, id: string): Promise<Sms | undefined> {
    const row = (await db(TABLE).select(SMS_COLUMNS).where({ id }).first()) as SmsRow | undefined;
    return row && toSms(row);
  }

  /** One page of a receptionist's messages, both directions, newest first by (created_at, id). */
  async listForReceptionist(
    tenantId: string,
    receptionistId: string,
    filters: SmsFilters,
    page: PageRequest,
  ): Promise<KeysetPage<Sms>> {
    const q = this.db(TABLE)
      .select(SMS_COLUMNS)
      .where({ tenant_id: tenantId, receptionist_id: receptionistId });
    if (filters.livemode !== undefined) q.andWhere('livemode', filters.livemode);
    if (filters.direction) q.andWhere('direction', filters.direction);
    if (filters.from) q.andWhere('created_at', '>=', filters.from);
    if (filters.toExclusive) q.andWhere('created_at', '<', filters.toExclusive);
    return newestFirst(q, page, toSms, { time: 'created_at' });
  }

  /** Outbound messages still queued `graceMs` after they were accepted, oldest first. */
  async queuedOlderThan(graceMs: number, limit: number): Promise<string[]> {
    const queued = this.db(TABLE).where('status', 'queued');
    return idsOlderThan(this.db, queued, 'updated_at', graceMs, limit);
  }
}
