import type { Knex, Stores } from '@switchboard/db';
import { applySmsReceipt } from '@switchboard/sms';
import type { SmsStatusMessage } from './messages';

/**
 * Applies `sms.status` (a carrier's delivery receipt) in ingestion's transaction: records
 * its id (a replay is a duplicate), then moves the receptionist's sent message with that
 * carrier id to `delivered` or `undelivered` with its event (`applySmsReceipt`). A receipt
 * that moves nothing (an unknown receptionist or message, another tenant's message, a second
 * receipt, one earlier than its `sent`) is accepted: `ignored`, and the early one is held
 * until its message is marked sent.
 */
export async function applySmsStatus(
  trx: Knex,
  stores: Stores,
  m: SmsStatusMessage,
): Promise<{ duplicate: true } | { duplicate: false; receipt: 'applied' | 'ignored' }> {
  if (!(await stores.telephonyMessages.record(trx, m))) return { duplicate: true };
  const moved = await applySmsReceipt(trx, stores.smsLifecycle, {
    receptionistId: m.receptionist_id,
    providerMessageId: m.provider_message_id,
    status: m.status,
    errorCode: m.status === 'undelivered' ? (m.error_code ?? null) : null,
    occurredAt: new Date(m.occurred_at),
  });
  return { duplicate: false, receipt: moved ? 'applied' : 'ignored' };
}
