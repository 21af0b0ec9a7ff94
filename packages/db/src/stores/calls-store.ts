import type { Knex } from 'knex';
import { newId } from '../ids';
import { keysetPage, type KeysetPage, type KeysetPosition } from '../keyset';
import type { Call, CallFields, CallFilters } from './call-types';

const TABLE = 'calls';

interface CallRow {
  id: string;
  tenant_id: string;
  receptionist_id: string;
  receptionist_name: string;
  provider_call_id: string | null;
  direction: Call['direction'];
  status: Call['status'];
  from_number: string;
  to_number: string;
  customer_name: string | null;
  customer_phone: string | null;
  duration_seconds: number | null;
  outcome: Call['outcome'];
  end_reason: Call['endReason'];
  started_at: Date;
  answered_at: Date | null;
  ended_at: Date | null;
  transcript: Call['transcript'];
  recording: Call['recording'];
  booking: Call['booking'];
  cost: Call['cost'];
  metadata: Call['metadata'];
  purpose: string | null;
  created_at: Date;
}

const toCall = (r: CallRow): Call => ({
  id: r.id,
  tenantId: r.tenant_id,
  receptionistId: r.receptionist_id,
  receptionistName: r.receptionist_name,
  providerCallId: r.provider_call_id,
  direction: r.direction,
  status: r.status,
  from: r.from_number,
  to: r.to_number,
  customerName: r.customer_name,
  customerPhone: r.customer_phone,
  durationSeconds: r.duration_seconds,
  outcome: r.outcome,
  endReason: r.end_reason,
  startedAt: r.started_at,
  answeredAt: r.answered_at,
  endedAt: r.ended_at,
  transcript: r.transcript,
  recording: r.recording,
  booking: r.booking,
  cost: r.cost,
  metadata: r.metadata,
  purpose: r.purpose,
  createdAt: r.created_at,
});

const COLUMN: Record<keyof CallFields, string> = {
  providerCallId: 'provider_call_id',
  direction: 'direction',
  status: 'status',
  from: 'from_number',
  to: 'to_number',
  customerName: 'customer_name',
  customerPhone: 'customer_phone',
  durationSeconds: 'duration_seconds',
  outcome: 'outcome',
  endReason: 'end_reason',
  startedAt: 'started_at',
  answeredAt: 'answered_at',
  endedAt: 'ended_at',
  transcript: 'transcript',
  recording: 'recording',
  booking: 'booking',
  cost: 'cost',
  metadata: 'metadata',
  purpose: 'purpose',
};
const JSON_FIELDS = new Set(['transcript', 'recording', 'booking', 'cost', 'metadata']);

/** Domain fields → column values; JSON columns are serialised explicitly for pg. */
export function callColumns(fields: CallFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const column = COLUMN[key as keyof CallFields];
    out[column] = JSON_FIELDS.has(key) && value !== null ? JSON.stringify(value) : value;
  }
  return out;
}

export class CallsStore {
  constructor(private readonly db: Knex) {}

  /** Calls with the receptionist's name joined in (a primary-key lookup per row). */
  private select(db: Knex = this.db): Knex.QueryBuilder {
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
  async get(tenantId: string, id: string, db: Knex = this.db): Promise<Call | undefined> {
    const row = (await this.select(db).where({ 'c.tenant_id': tenantId, 'c.id': id }).first()) as
      CallRow | undefined;
    return row && toCall(row);
  }

  /**
   * One page, newest first by (started_at, id). With a receptionist filter the query walks
   * the per-receptionist index; otherwise the per-tenant one.
   */
  async list(
    tenantId: string,
    filters: CallFilters,
    page: { limit: number; after?: KeysetPosition | null },
  ): Promise<KeysetPage<Call>> {
    const q = this.select().where('c.tenant_id', tenantId);
    if (filters.receptionistId) q.andWhere('c.receptionist_id', filters.receptionistId);
    if (filters.direction) q.andWhere('c.direction', filters.direction);
    if (filters.status) q.andWhere('c.status', filters.status);
    if (filters.from) q.andWhere('c.started_at', '>=', filters.from);
    if (filters.toExclusive) q.andWhere('c.started_at', '<', filters.toExclusive);
    const result = await keysetPage<CallRow>(q, {
      timeColumn: 'c.started_at',
      idColumn: 'c.id',
      ...page,
      position: (r) => ({ t: r.started_at.getTime(), id: r.id }),
    });
    return { rows: result.rows.map(toCall), next: result.next };
  }
}
