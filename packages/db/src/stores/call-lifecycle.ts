import type { Knex } from 'knex';
import { newId } from '../ids';
import {
  FINAL_CALL_STATUSES,
  type AcceptedOutboundCall,
  type Call,
  type CallFields,
  type CallStatus,
  type NewOutboundCall,
} from './call-types';
import {
  ACCEPTED_COLUMNS,
  callColumns,
  toAccepted,
  toCall,
  type AcceptedRow,
  type CallRow,
} from './calls-rows';

const TABLE = 'calls';

/** The statuses a reported end gives a call (`miss` gives `missed`). */
export type CallEndStatus = Extract<
  CallStatus,
  'completed' | 'busy' | 'no_answer' | 'failed' | 'voicemail'
>;

/** What an end or a miss writes besides the status: the call's report. */
export type CallReport = Omit<CallFields, 'status' | 'direction' | 'from' | 'to' | 'startedAt'>;

/**
 * The call lifecycle (`calls.status`), one statement per transition, the caller's
 * transaction first:
 *
 *   outbound:  insertOutbound ─▶ queued ──claim (the dialler)──▶ ringing
 *   inbound:   insertReported ─▶ ringing   (the first telephony message about the call)
 *   not ended ──start──▶ in_progress        (an ended call keeps its status)
 *   any ──end──▶ completed | busy | no_answer | failed | voicemail
 *   not ended ──miss──▶ missed
 *
 * Events are emitted by the caller in the transition's transaction, by telephony ingestion
 * (packages/telephony/src/ingestion/apply.ts): call.started with `start`, call.completed with
 * the first `end` of a call, call.missed with `miss`; the inserts and the claim emit nothing.
 * Everything that happens on the phone, the dialler's reports included, reaches the call
 * through ingestion; the dialler itself makes only the claim (apps/worker/src/dialler).
 * A call inserted already in a state (fixtures: CallsStore.insert) is a row made so, not a
 * transition. `canceled` is a status of the contract that no transition makes yet.
 *
 * Invariants: a call is dialled at most once (only one claim ever wins, queued → ringing);
 * `started_at` never changes once the row exists (keyset order depends on it); messages may
 * arrive in any order, so ingestion holds the call locked (CallsStore.findByProviderForUpdate)
 * and decides from the row as it is: a late call.started never moves an ended call back (its
 * status stays), only the first end of a call emits call.completed (a later one rewrites
 * the report and emits nothing), and a miss after an end changes nothing.
 */
export class CallLifecycle {
  /**
   * → queued: an outbound call from the tenant's receptionist (its number becomes `from`),
   * in one statement. Undefined when the receptionist is not the tenant's, not ready or has
   * no number, or when the Idempotency-Key already holds a call (the uniqueness trigger on
   * (tenant_id, idempotency_key) skips the insert: CallsStore.createOutbound returns that one).
   */
  async insertOutbound(
    db: Knex,
    id: string,
    input: NewOutboundCall,
  ): Promise<AcceptedOutboundCall | undefined> {
    const result = (await db.raw(
      `INSERT INTO calls (id, tenant_id, receptionist_id, direction, status, from_number,
         to_number, customer_name, purpose, metadata, started_at, created_at, idempotency_key,
         idempotency_fingerprint, livemode)
       SELECT ?, r.tenant_id, r.id, 'outbound', 'queued', r.phone_number, ?, ?, ?, ?::jsonb, ?, ?,
              ?, ?, ?
         FROM receptionists r
        WHERE r.id = ? AND r.tenant_id = ? AND r.status = 'ready' AND r.phone_number IS NOT NULL
       ON CONFLICT DO NOTHING
       RETURNING ${ACCEPTED_COLUMNS.join(', ')}`,
      [
        id,
        input.to,
        input.customerName,
        input.purpose,
        JSON.stringify(input.metadata),
        input.at,
        input.at,
        input.idempotency?.key ?? null,
        input.idempotency?.fingerprint ?? null,
        input.livemode ?? true,
        input.receptionistId,
        input.tenantId,
      ],
    )) as { rows: AcceptedRow[] };
    const row = result.rows[0];
    return row && toAccepted(row);
  }

  /**
   * → ringing: a call first reported by the telephony side, unless the receptionist has one
   * with that provider call id already: the uniqueness trigger on (receptionist_id,
   * provider_call_id) makes two first messages racing each other converge on one row (the
   * second insert is skipped). Read it back with `CallsStore.findByProviderForUpdate`.
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

  /**
   * The dialler's claim: queued → ringing with the provider's call id, in one conditional
   * UPDATE that also returns the call. At most one claimer ever wins for a call, so a
   * duplicated or re-run job can never dial the customer twice. Undefined when the call is
   * gone or no longer queued. One statement: a second read after the commit could fail (a
   * Postgres outage) and leave a claimed call that nobody dials. It must commit durably
   * (the pool's default): it guards a phone call.
   */
  async claim(db: Knex, id: string, providerCallId: string): Promise<Call | undefined> {
    const { rows } = (await db.raw(
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
   * → in_progress for `call` as the caller read it, locked; a call that ended already keeps
   * its status (a late call.started), and only `customerName` is written then.
   */
  async start(
    trx: Knex,
    call: Pick<Call, 'id' | 'status'>,
    report: { customerName: string | null },
  ): Promise<void> {
    const ended = FINAL_CALL_STATUSES.includes(call.status);
    await write(trx, call.id, { ...(ended ? {} : { status: 'in_progress' as const }), ...report });
  }

  /** → `status`, the end the telephony side reported, with its report. */
  async end(trx: Knex, id: string, status: CallEndStatus, report: CallReport): Promise<void> {
    await write(trx, id, { status, ...report });
  }

  /** → missed, with its report; the caller checked that the call has not ended. */
  async miss(trx: Knex, id: string, report: CallReport): Promise<void> {
    await write(trx, id, { status: 'missed', ...report });
  }
}

async function write(trx: Knex, id: string, fields: CallFields): Promise<void> {
  await trx(TABLE)
    .where({ id })
    .update({ ...callColumns(fields), updated_at: trx.fn.now() });
}
