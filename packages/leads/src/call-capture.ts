import type { Knex, LeadsStore } from '@switchboard/db';
import { emit } from '@switchboard/events';
import { leadCreated, leadUpdated } from './events';
import { diffLead } from './fields';
import { isPossibleE164 } from '@switchboard/phone';
import { LEAD_NAME_MAX } from './schema';

export interface CapturedCaller {
  tenantId: string;
  receptionistId: string;
  callId: string;
  phone: string | null;
  name: string | null;
  /** The call's mode: a test-mode call's caller becomes a test-mode lead. */
  livemode: boolean;
}

/**
 * A caller whose call ended with `lead_captured`: creates their lead (`source: "call"`, the
 * receptionist's id, the call's id in metadata) or fills the blanks of the lead that has
 * their phone (name, receptionist), with the same events as any other path. Runs inside the
 * call's own transaction, so the lead exists if and only if the call's completion commits.
 * A caller without a usable number (withheld, malformed) makes no lead.
 */
export async function captureCallLead(
  trx: Knex,
  store: LeadsStore,
  caller: CapturedCaller,
): Promise<void> {
  if (!caller.phone || !isPossibleE164(caller.phone)) return;
  const name = caller.name?.trim().slice(0, LEAD_NAME_MAX) || null;
  const created = await store.insert(trx, {
    tenantId: caller.tenantId,
    livemode: caller.livemode,
    source: 'call',
    fields: {
      phone: caller.phone,
      name,
      receptionistId: caller.receptionistId,
      metadata: { call_id: caller.callId },
    },
  });
  if (created) {
    await emit(trx, leadCreated(created));
    return;
  }
  const lead = await store.findByPhone(trx, caller.tenantId, caller.livemode, caller.phone, true);
  if (!lead) return;
  const { changes, changed } = diffLead(lead, {
    ...(lead.name ? {} : { name }),
    ...(lead.receptionistId ? {} : { receptionistId: caller.receptionistId }),
  });
  if (changed.length === 0) return;
  const updated = await store.update(trx, lead.id, changes, new Date());
  await emit(trx, leadUpdated(updated, changed));
}
