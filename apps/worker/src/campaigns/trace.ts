import {
  contextFromTraceparent,
  currentTraceparent,
  startSpan,
  tracingStarted,
  type Context,
} from '@switchboard/telemetry';
import type { WorkerDeps } from '../deps';

/**
 * How long a campaign's trace is kept for the workers that join it later: longer than a
 * campaign can run (10,000 recipients at 1 a minute is 7 days); the key then expires.
 */
const TRACE_TTL_S = 30 * 24 * 3600;

const traceKey = (deps: WorkerDeps, campaignId: string) =>
  `${deps.config.queuePrefix}:campaign-trace:${campaignId}`;

/**
 * Keeps the trace a campaign was started in (the start job's span, itself in the trace of
 * the request that created the campaign) in Redis, for the workers that join the campaign
 * later. Nothing when tracing is off or no span is active (a start by the reconciler).
 * Never fails the start: a trace that is not kept only leaves those workers' sends in
 * traces of their own.
 */
export async function keepCampaignTrace(deps: WorkerDeps, campaignId: string): Promise<void> {
  const traceparent = currentTraceparent();
  if (!traceparent) return;
  try {
    await deps.redis.set(traceKey(deps, campaignId), traceparent, 'EX', TRACE_TTL_S);
  } catch (err) {
    deps.logger.debug({ err, campaignId }, 'campaign trace not kept');
  }
}

/**
 * The context a worker that joins a running campaign sends it in: a `campaign.join` span of
 * the campaign's trace. Undefined (no work, no Redis call) when tracing is off, and when
 * the trace is not known or cannot be read.
 */
export async function campaignTraceContext(
  deps: WorkerDeps,
  campaignId: string,
): Promise<Context | undefined> {
  if (!tracingStarted()) return undefined;
  let traceparent: string | null;
  try {
    traceparent = await deps.redis.get(traceKey(deps, campaignId));
  } catch {
    return undefined;
  }
  if (!traceparent) return undefined;
  const { span, context } = startSpan('campaign.join', {
    parent: contextFromTraceparent(traceparent),
    attributes: { 'switchboard.campaign_id': campaignId },
  });
  span.end();
  return context;
}
