import { UnrecoverableError, type Job } from 'bullmq';
import type { Call } from '@switchboard/db';
import { parseOutboundCallJob } from '@switchboard/queues';
import type { WorkerDeps } from '../deps';
import { notConnectedMessage } from './messages';
import { reportDurably } from './report';
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
 * (queued → ringing) and dials only if that claim won, so a duplicate job, a re-run after a
 * crash or a reconciler re-add never dials the customer a second time.
 */
export function dialProcessor(deps: WorkerDeps, provider: TelephonyProvider) {
  const report: TelephonyReport = async (message) => {
    await reportDurably(deps, message);
  };
  return async (job: Job<unknown>): Promise<void> => {
    const data = parseOutboundCallJob(job.data);
    if (!data) throw new UnrecoverableError(`outbound-calls job ${job.id} has invalid data`);
    const providerCallId = provider.providerCallId(data.callId);
    const call = await deps.stores.calls.claimForDialling(data.callId, providerCallId);
    if (!call) return; // gone, or claimed already: nothing to do
    const request = requestOf(call, providerCallId);
    try {
      await provider.dial(request, report);
    } catch (err) {
      // The claim is spent (never dialled again), so the call must not stay ringing: it failed.
      deps.logger.warn({ err, callId: call.id, provider: provider.name }, 'dial failed');
      await report(notConnectedMessage(request, 'error', new Date()));
    }
  };
}
