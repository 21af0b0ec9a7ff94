import type { ChaosPart, PartResult } from '../part';
import { pool, send, tally, type Outcome } from '../harness/client';
import { intEnv, secs } from '../harness/env';
import { startStack } from '../harness/stack';
import { messages, uid } from '../../test/support/fixtures';

export interface UsageThresholdsOptions {
  tenants: number;
  /** call.ended messages per tenant, 2 minutes each. */
  calls: number;
  log(line: string): void;
}

/** Each tenant's plan: 80 % is reached by the 36th call of 2 minutes, 100 % by the 45th. */
const PLAN_MINUTES = 90;
const THRESHOLDS = [80, 100];

/**
 * Usage thresholds under concurrency: `tenants` tenants on a 90-minute plan each get `calls`
 * calls of 2 minutes ending at the same moment, ingested 32 at a time through two API
 * processes, interleaved across tenants. Every tenant must get exactly one `usage.threshold`
 * at 80 and one at 100 (docs/API.md, Usage), its usage must count every call once, and each
 * threshold event must reach the tenant's subscriber.
 */
export async function runUsageThresholds(opts: UsageThresholdsOptions): Promise<PartResult> {
  const { tenants, calls, log } = opts;
  const stack = await startStack({ routes: { '/usage': (_q, res) => res.writeHead(200).end() } });
  try {
    const { ctx } = stack.servers;
    const second = await stack.startApi();
    const world: Array<{ tenantId: string; auth: string; rcpId: string }> = [];
    for (let t = 0; t < tenants; t++) {
      const tenant = await ctx.deps.stores.tenants.create({
        name: `Usage ${uid()}`,
        planMinutes: PLAN_MINUTES,
      });
      const { auth } = await ctx.keyFor(tenant.id, ['admin']);
      const rcp = await ctx.deps.stores.receptionists.create({
        tenantId: tenant.id,
        name: 'Front Desk',
        status: 'ready',
        phoneNumber: '+14155550199',
      });
      const sub = await send(`${stack.api.baseUrl}/api/v1/webhooks`, {
        lane: 'setup',
        headers: { authorization: auth },
        body: { url: stack.hookUrl('/usage'), events: ['usage.threshold'] },
      });
      if (sub.status !== 201) throw new Error(`subscription refused: ${sub.status}`);
      world.push({ tenantId: tenant.id, auth, rcpId: rcp.id });
    }
    const endedAt = new Date();
    const startedAt = new Date(endedAt.getTime() - 2 * 60_000 + 30_000).toISOString();
    // Interleaved: call i of every tenant, then call i + 1, so that tenants race each other
    // as well as their own calls.
    const batch = Array.from({ length: calls * tenants }, (_, i) => {
      const w = world[i % tenants] as (typeof world)[number];
      return messages.ended(w.rcpId, `pc_${uid()}`, startedAt, endedAt.toISOString());
    });
    const outcomes: Outcome[] = [];
    const began = Date.now();
    await pool(batch.length, 32, async (i) => {
      const api = i % 2 ? second : stack.api;
      outcomes.push(
        await send(`${api.baseUrl}/internal/v1/telephony/events`, {
          lane: 'ingest',
          headers: { authorization: `Bearer ${ctx.config.ingestToken}` },
          body: batch[i],
        }),
      );
    });
    const ingestMs = Date.now() - began;
    log(`  ${batch.length} call.ended ingested in ${secs(ingestMs)}`);
    const problems: string[] = [];
    const refused = outcomes.filter((o) => o.status !== 202);
    if (refused.length) problems.push(`ingestion answered ${tally(refused)} (all 202 expected)`);

    const events = (await ctx.deps
      .knex('events')
      .where({ type: 'usage.threshold' })
      .select('id', 'tenant_id', 'data')) as Array<{
      id: string;
      tenant_id: string;
      data: { threshold: number; minutes_used: number };
    }>;
    let exact = 0;
    let wrongUsage = 0;
    for (const w of world) {
      const mine = events.filter((e) => e.tenant_id === w.tenantId).map((e) => e.data.threshold);
      const ok = THRESHOLDS.every((th) => mine.filter((x) => x === th).length === 1);
      if (ok && mine.length === THRESHOLDS.length) exact++;
      else problems.push(`tenant ${w.tenantId}: thresholds [${mine.sort().join(', ')}]`);
      const row = (await ctx.deps
        .knex('usage_periods')
        .where({ tenant_id: w.tenantId })
        .sum({ calls: 'calls_completed', minutes: 'minutes_used' })) as Array<{
        calls: string | null;
        minutes: string | null;
      }>;
      if (Number(row[0]?.calls) !== calls || Number(row[0]?.minutes) !== 2 * calls) wrongUsage++;
    }
    if (wrongUsage)
      problems.push(`${wrongUsage} tenant(s) whose usage does not count ${calls} calls`);
    // Each threshold event reaches its subscriber (at least once, under its own id).
    const wanted = new Set(events.map((e) => e.id));
    const deadline = Date.now() + 60_000;
    const got = () =>
      new Set(
        stack.receiver.requests
          .filter((r) => r.path === '/usage')
          .map((r) => r.headers['x-service-event-id'] as string),
      );
    while ([...wanted].some((id) => !got().has(id)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    const undelivered = [...wanted].filter((id) => !got().has(id));
    if (undelivered.length) problems.push(`${undelivered.length} threshold event(s) not delivered`);
    const requests = stack.receiver.requests.filter((r) => r.path === '/usage').length;
    return {
      figures: [
        ['tenants × calls', `${tenants} × ${calls} (2 min each, plan ${PLAN_MINUTES} min)`],
        ['call.ended ingested', `${batch.length} in ${secs(ingestMs)}, 32 at a time, 2 APIs`],
        ['ingestion answers', tally(outcomes)],
        ['usage.threshold events', `${events.length} (expected ${tenants * THRESHOLDS.length})`],
        ['tenants with exactly one 80 and one 100', `${exact} of ${tenants}`],
        ['tenants whose usage counts every call once', `${tenants - wrongUsage} of ${tenants}`],
        ['threshold events delivered', `${wanted.size - undelivered.length} (${requests} POSTs)`],
      ],
      problems,
    };
  } finally {
    await stack.destroy();
  }
}

export const usageThresholdsPart: ChaosPart = {
  description: 'usage thresholds under concurrent call ends on two APIs: each fires exactly once',
  run: ({ log }) =>
    runUsageThresholds({
      tenants: intEnv('CHAOS_TENANTS', 20),
      calls: intEnv('CHAOS_CALLS_PER_TENANT', 50),
      log,
    }),
};
