import type { Knex } from 'knex';
import { newId } from '../ids';
import type { KeysetPage, PageRequest } from '../keyset';
import type {
  AcceptedOutboundCall,
  Call,
  CallFields,
  CallFilters,
  CallSummary,
  NewOutboundCall,
} from './call-types';

import {
  ACCEPTED_COLUMNS,
  callColumns,
  toAccepted,
  toCall,
  type AcceptedRow,
  type CallRow,
} from './calls-rows';
import { runPrepared } from '../prepared';
import { listCalls } from './calls-list';
import { ago, idsOlderThan } from './older-than';

const TABLE = 'calls';

/** `createOutbound`'s one statement, prepared once per connection (`runPrepared`). */
const CREATE_OUTBOUND_SQL = `INSERT INTO calls (id, tenant_id, receptionist_id, direction, status,
    from_number, to_number, customer_name, purpose, metadata, started_at, created_at,
    idempotency_key, idempotency_fingerprint)
  SELECT $1, r.tenant_id, r.id, 'outbound', 'queued', r.phone_number, $2, $3, $4, $5::jsonb, $6,
         $6, $7, $8
    FROM receptionists r
   WHERE r.id = $9 AND r.tenant_id = $10 AND r.status = 'ready' AND r.phone_number IS NOT NULL
  ON CONFLICT DO NOTHING
  RETURNING ${ACCEPTED_COLUMNS.join(', ')}`;

export class CallsStore {
  constructor(private readonly db: Knex) {}

  /** Calls with the receptionist's name joined in (a primary-key lookup per row). */
  private select(db: Knex): Knex.QueryBuilder {
    return db(`${TABLE} as c`)
      .join('receptionists as r', 'r.id', 'c.receptionist_id')
      .select('c.*', 'r.name as receptionist_name');
  }

  async insert(
    trx: Knex,
    input: { tenantId: string; receptionistId: string; id?: string } & CallFields &
      Pick<Call, 'direction' | 'status' | 'from' | 'to' | 'startedAt'>,
  ): Promise<string> {
    const { tenantId, receptionistId, id, ...fields } = input;
    const callId = id ?? newId('call');
    await trx(TABLE).insert({
      id: callId,
      tenant_id: tenantId,
      receptionist_id: receptionistId,
      ...callColumns(fields),
    });
    return callId;
  }

  /**
   * Inserts a call first reported by the telephony side, unless the receptionist has one with
   * that provider call id already: the uniqueness trigger on (receptionist_id,
   * provider_call_id) makes two first messages racing each other converge on one row (the
   * second insert is skipped). Read it back with `findByProviderForUpdate`.
   */
  async insertReported(
    trx: Knex,
    input: Pick<Call, 'tenantId' | 'receptionistId' | 'direction' | 'from' | 'to' | 'startedAt'> & {
      providerCallId: string;
    },
  ): Promise<void> {
    await trx(TABLE)
      .insert({
        id: newId('call'),
        tenant_id: input.tenantId,
        receptionist_id: input.receptionistId,
        provider_call_id: input.providerCallId,
        direction: input.direction,
        status: 'ringing',
        from_number: input.from,
        to_number: input.to,
        started_at: input.startedAt,
      })
      .onConflict()
      .ignore();
  }

  async update(trx: Knex, id: string, fields: CallFields): Promise<void> {
    await trx(TABLE)
      .where({ id })
      .update({ ...callColumns(fields), updated_at: trx.fn.now() });
  }

  /** The call a provider reports on, locked for the rest of the transaction. */
  async findByProviderForUpdate(
    trx: Knex,
    receptionistId: string,
    providerCallId: string,
  ): Promise<Call | undefined> {
    const row = (await this.select(trx)
      .where({ 'c.receptionist_id': receptionistId, 'c.provider_call_id': providerCallId })
      .forUpdate('c')
      .first()) as CallRow | undefined;
    return row && toCall(row);
  }

  /** The tenant's call, or undefined (another tenant's id is simply not found). */
  async get(db: Knex, tenantId: string, id: string): Promise<Call | undefined> {
    const row = (await this.select(db).where({ 'c.tenant_id': tenantId, 'c.id': id }).first()) as
      CallRow | undefined;
    return row && toCall(row);
  }

  /** One page, newest first by (started_at, id): see `listCalls`. */
  list(
    tenantId: string,
    filters: CallFilters,
    page: PageRequest,
  ): Promise<KeysetPage<CallSummary>> {
    return listCalls(this.db, tenantId, filters, page);
  }

  /**
   * Inserts a queued outbound call from the tenant's receptionist (its number becomes `from`),
   * in one autocommit statement: committed when this returns. Undefined when the
   * receptionist is not the tenant's, not ready or has no number (and no call holds the key).
   * With an Idempotency-Key the uniqueness trigger on (tenant_id, idempotency_key) turns a
   * second insert within the key's 24 hours into a no-op, across processes and whatever Redis remembers: the call that holds
   * the key is returned with `created: false`.
   */
  async createOutbound(
    input: NewOutboundCall,
  ): Promise<{ call: AcceptedOutboundCall; created: boolean } | undefined> {
    const [row] = await runPrepared<AcceptedRow>(
      this.db,
      'sb_calls_create_outbound',
      CREATE_OUTBOUND_SQL,
      [
        newId('call'),
        input.to,
        input.customerName,
        input.purpose,
        JSON.stringify(input.metadata),
        input.at,
        input.idempotency?.key ?? null,
        input.idempotency?.fingerprint ?? null,
        input.receptionistId,
        input.tenantId,
      ],
    );
    if (row) return { call: toAccepted(row), created: true };
    // A conflict waited for the key's holder to commit, so that call is visible now.
    const existing =
      input.idempotency && (await this.findByIdempotencyKey(input.tenantId, input.idempotency.key));
    return existing ? { call: existing, created: false } : undefined;
  }

  async findByIdempotencyKey(
    tenantId: string,
    key: string,
  ): Promise<AcceptedOutboundCall | undefined> {
    const row = (await this.db(TABLE)
      .select(ACCEPTED_COLUMNS)
      .where({ tenant_id: tenantId, idempotency_key: key })
      .orderBy('started_at', 'desc') // a key reused after its 24 hours holds the newest call
      .first()) as AcceptedRow | undefined;
    return row && toAccepted(row);
  }

  /** Any tenant's call by id: for the worker, which acts on ids from its own jobs. */
  async findById(db: Knex, id: string): Promise<Call | undefined> {
    const row = (await this.select(db).where('c.id', id).first()) as CallRow | undefined;
    return row && toCall(row);
  }

  /**
   * The dialler's claim: queued → ringing with the provider's call id, in one conditional
   * UPDATE that also returns the call. At most one claimer ever wins for a call, so a
   * duplicated or re-run job can never dial the customer twice. Undefined when the call is
   * gone or no longer queued. One statement: a second read after the commit could fail (a
   * Postgres outage) and leave a claimed call that nobody dials. It must commit durably
   * (the pool's default): it guards a phone call.
   */
  async claimForDialling(id: string, providerCallId: string): Promise<Call | undefined> {
    const { rows } = (await this.db.raw(
      `UPDATE calls c
          SET status = 'ringing', provider_call_id = ?, updated_at = now()
         FROM receptionists r
        WHERE c.id = ? AND c.status = 'queued' AND c.direction = 'outbound'
          AND r.id = c.receptionist_id
    RETURNING c.*, r.name AS receptionist_name`,
      [providerCallId, id],
    )) as { rows: CallRow[] };
    return rows[0] && toCall(rows[0]);
  }

  /**
   * Outbound calls the dialler claimed but that stopped progressing: `ringing` for longer
   * than `ringingMs` or `in_progress` for longer than `inProgressMs` since their last change
   * (a worker died mid-call, or the provider never reported the end).
   */
  async staleOutbound(ringingMs: number, inProgressMs: number, limit: number): Promise<string[]> {
    const rows = (await this.db(TABLE)
      .select('id')
      .where({ direction: 'outbound' })
      .andWhere((q) =>
        q
          .where((r) =>
            r.where('status', 'ringing').andWhere('updated_at', '<', ago(this.db, ringingMs)),
          )
          .orWhere((r) =>
            r
              .where('status', 'in_progress')
              .andWhere('updated_at', '<', ago(this.db, inProgressMs)),
          ),
      )
      .orderBy('updated_at')
      .limit(limit)) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  /** Outbound calls still queued `graceMs` after they were accepted, oldest first. */
  async queuedOutbound(graceMs: number, limit: number): Promise<string[]> {
    const queued = this.db(TABLE).where({ status: 'queued', direction: 'outbound' });
    return idsOlderThan(this.db, queued, 'created_at', graceMs, limit);
  }
}
