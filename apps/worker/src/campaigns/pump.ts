import { setTimeout as sleep } from 'node:timers/promises';
import { withLogContext } from '@switchboard/logger';
import { withContext, type Context } from '@switchboard/telemetry';
import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import type { SmsSender } from '../sms';
import type { CampaignRateLimiter } from './rate';
import { sendNext } from './send-next';

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  sleep(ms, undefined, { signal }).catch(() => undefined);

/**
 * This worker's share of sending: one loop per running campaign it has joined. A loop takes
 * a unit of the campaign's rate, and of its tenant's shared rate, from the limiter (waiting as long as the limiter
 * says when refused), then sends one message (`sendNext`). Every worker joins every running
 * campaign, so the campaign keeps its rate while any worker lives; the limiter in Redis
 * keeps their sum at the rate, and the claims in Postgres keep their recipients apart.
 * A loop ends when its campaign has nothing pending or is not running (canceled: the next
 * claim finds it so), or when the worker stops.
 */
export class CampaignPump implements Component {
  readonly name = 'campaign-pump';
  private readonly loops = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly deps: WorkerDeps,
    private readonly sms: SmsSender,
    private readonly limiter: CampaignRateLimiter,
    private readonly errorBackoffMs: number,
  ) {}

  /**
   * Starts sending the campaign from this worker; a no-op while it already does. The loop
   * runs in the active trace context (the start job's span), or in `trace` when given (a
   * worker that joins later: ./trace.ts), so its messages and events join the campaign's
   * trace.
   */
  join(campaignId: string, tenantId: string, perMinute: number, trace?: Context): void {
    if (this.stopping.signal.aborted || this.loops.has(campaignId)) return;
    const run = () =>
      withLogContext({ campaign_id: campaignId }, () => this.loop(campaignId, tenantId, perMinute));
    const loop = (trace ? withContext(trace, run) : run()).finally(() =>
      this.loops.delete(campaignId),
    );
    this.loops.set(campaignId, loop);
  }

  /** Whether this worker sends the campaign now. */
  sends(campaignId: string): boolean {
    return this.loops.has(campaignId);
  }

  /** Campaigns this worker is sending now. */
  get active(): number {
    return this.loops.size;
  }

  async close(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.loops.values()]);
  }

  private async loop(campaignId: string, tenantId: string, perMinute: number): Promise<void> {
    const { signal } = this.stopping;
    while (!signal.aborted) {
      try {
        const waitMs = await this.limiter.take(campaignId, perMinute, tenantId);
        if (waitMs > 0) {
          await pause(waitMs, signal);
          continue;
        }
        if ((await sendNext(this.deps, this.sms, campaignId)) === 'finished') return;
      } catch (err) {
        // Postgres or Redis away: nothing was half done (each step is one transaction).
        this.deps.logger.warn({ err, campaignId }, 'campaign send step failed; retrying');
        await pause(this.errorBackoffMs, signal);
      }
    }
  }
}
