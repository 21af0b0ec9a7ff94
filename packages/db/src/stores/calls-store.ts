import type { Knex } from 'knex';
import { newId } from '../ids';
import type { KeysetPage, PageRequest } from '../keyset';
import type { CallLifecycle } from './call-lifecycle';
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
import { listCalls } from './calls-list';
import { ago, idsOlderThan } from './older-than';

const TABLE = 'calls';

/**
 * Call reads, and the accepting insert of POST /calls/outbound. Every transition of a call
 * is a statement of the call lifecycle (call-lifecycle.ts).
 */
export class CallsStore {
  constructor(
    private readonly db: Knex,
    private readonly lifecycle: CallLifecycle,
  ) {}

  /** Calls with the receptionist's name joined in (a primary-key lookup per row). */
  private select(db: Knex): Knex.QueryBuilder {
    return db(`${TABLE} as c`)
      .join('receptionists as r', 'r.id', 'c.receptionist_id')
      .select('c.*', 'r.name as receptionist_name');
  }

  /**
   * Inserts a call as given (fixtures), in the caller's transaction: a row made in a state,
   * not a transition. The calls of the product are made by the call lifecycle.
   */
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

  /**
   * The tenant's call, or undefined (another tenant's id is simply not found, nor, when
   * `livemode` is given, a call of the other mode: docs/API.md, Test mode).
   */
  async get(db: Knex, tenantId: string, id: string, livemode?: boolean): Promise<Call | undefined> {
    const q = this.select(db).where({ 'c.tenant_id': tenantId, 'c.id': id });
    if (livemode !== undefined) q.andWhere('c.livemode', livemode);
    const row = (await q.first()) as CallRow | undefined;
    return row && toCall(row);
  }

  /** Whether call `id` is live (false: test mode); undefined when there is no such call. */
  async modeOf(db: Knex, id: string): Promise<boolean | undefined> {
    const row = (await db(TABLE).select('livemode').where({ id }).first()) as
      { livemode: boolean } | undefined;
    return row?.livemode;
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
    const call = await this.lifecycle.insertOutbound(this.db, newId('call'), input);
    if (call) return { call, created: true };
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
