import { FINAL_CALL_STATUSES, type Call } from '@switchboard/db';
import type { OutboundCallJob } from '@switchboard/queues';
import type { WorkerDeps } from '../deps';
import { untilCommitted } from '../until-committed';
import { notConnectedMessage } from './messages';
import { reportUntilCommitted } from './report';
import type { DialRequest, TelephonyProvider, TelephonyReport } from './provider';

export const requestOf = (call: Call, providerCallId: string): DialRequest => ({
  callId: call.id,
  providerCallId,
  receptionistId: call.receptionistId,
  receptionistName: call.receptionistName,
  from: call.from,
  to: call.to,
  customerName: call.customerName,
  purpose: call.purpose,
  metadata: call.metadata,
  startedAt: call.startedAt,
});

/**
 * The outbound-calls processor (jobId = call id). Invariant: a call is dialled at most once.
 * The job carries only the call id; the processor claims the row with a conditional UPDATE
 * (queued → ringing, a durable commit) and dials only if that claim won, so a duplicate job,
 * a re-run after a crash or a reconciler re-add never dials the customer a second time.
 * Reports are retried through a Postgres outage until they commit, so a call that was
 * dialled always ends with what happened on the phone.
 *
 * A test-mode call (docs/API.md, Test mode) is dialled by `simulator`, whatever `provider`
 * is: the mode is read before the claim, so the provider_call_id stored is the simulator's.
 */
export function dialProcessor(
  deps: WorkerDeps,
  live: TelephonyProvider,
  simulator: TelephonyProvider = live,
) {
  const report: TelephonyReport = (message) => reportUntilCommitted(deps, message);
  return async (data: OutboundCallJob): Promise<void> => {
    // A live call, or one that is gone (then the claim below finds nothing either).
    const livemode = (await deps.stores.calls.modeOf(deps.knex, data.callId)) ?? true;
    const provider = livemode ? live : simulator;
    const providerCallId = provider.providerCallId(data.callId);
    const call = await deps.stores.callLifecycle.claim(deps.knex, data.callId, providerCallId);
    if (!call) return; // gone, or claimed already: nothing to do
    deps.logger.debug({ provider: provider.name }, 'dialling');
    const request = requestOf(call, providerCallId);
    try {
      await provider.dial(request, report);
    } catch (err) {
      deps.logger.warn({ err, callId: call.id, provider: provider.name }, 'dial failed');
      // The claim is spent (never dialled again), so the call must end: as failed, unless
      // the provider got as far as reporting how it ended. The id makes this report once.
      const now = await untilCommitted(deps.logger, 'read a call', () =>
        deps.stores.calls.findById(deps.knex, call.id),
      );
      if (now && FINAL_CALL_STATUSES.includes(now.status)) return;
      await report({
        ...notConnectedMessage(request, 'error', new Date()),
        id: `dial_error_${call.id}`,
      });
    }
  };
}
