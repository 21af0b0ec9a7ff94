import { simulatorHandoffs } from '../../apps/worker/src/sms';
import { campaignPhone } from '../../test/support/campaigns';
import type { ChaosPart, PartResult } from '../part';
import { pool, tally, type Outcome } from '../harness/client';
import { intEnv, secs } from '../harness/env';
import { startStack, type Stack } from '../harness/stack';

export interface SmsFaultsOptions {
  /** Texts sent through POST /sms/send in each phase. */
  texts: number;
  /** Recipients of the campaign of each phase (sent at 600 a minute). */
  recipients: number;
  /** How long Postgres is away in the outage phase. */
  outageMs: number;
  /** Worker SIGKILLs in the kill phase. */
  kills: number;
  log(line: string): void;
}

/** Handed to the carrier and recorded so: sent, then maybe a receipt. */
const SENT = ['sent', 'delivered', 'undelivered'];
const FINAL = [...SENT, 'failed'];
/** A claimed text of a dead worker is failed (`send_interrupted`) this long after its claim. */
const STALE_SENDING_MS = 120_000;

interface Phase {
  name: string;
  accepted: number;
  counts: Record<string, number>;
  /** Texts the simulated carrier got (its log, in Redis, outlives the worker). */
  handedOver: number;
  handedTwice: number;
  /** The carrier took them, and they ended `failed`. */
  takenButFailed: number;
  /** `send_interrupted` texts the carrier never got. */
  interruptedUnsent: number;
  /** Texts claimed (`sending`) at the moment of each kill. */
  inFlightAtKills: number;
  sentEvents: number;
  sentWithoutOneEvent: number;
  usageCounted: number;
  campaign: { status: string; sent: number; failed: number; completedEvents: number };
  recipientsOff: number;
  finalAfterMs: number;
}

/**
 * Texts and a campaign under faults, with the production worker and the simulated carrier
 * at real speed (about 300 ms a hand-off, its log in Redis): in one phase Postgres stops for
 * `outageMs` while texts are with the carrier; in the other the worker is SIGKILLed `kills`
 * times mid-send. Each phase sends `texts` texts through the API and a campaign of
 * `recipients`, and waits until every text is final. No accepted text may be lost or handed
 * to the carrier twice; every text the carrier took must end `sent` with one `sms.sent` and
 * its usage, except, under a SIGKILL, those in flight at the kill, which end `failed:
 * send_interrupted` (docs/API.md, SMS: at most once); the campaign completes once with
 * counts equal to its messages.
 */
export async function runSmsFaults(opts: SmsFaultsOptions): Promise<PartResult> {
  const { log } = opts;
  const stack = await startStack({
    routes: {},
    workerEnv: { SIMULATOR_SPEED: '1', WORKER_CONCURRENCY: '8' },
    // 2 × `texts` sends with one key, 8 at a time: the rate limit is not under test.
    apiEnv: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' },
  });
  const problems: string[] = [];
  const phases: Phase[] = [];
  // Texts claimed (with the carrier, or about to be) when Postgres stopped: their outcomes
  // are written after it is back.
  let claimedAtOutage = 0;
  try {
    const { ctx } = stack.servers;
    const { tenantId, auth } = await ctx.tenant(['write']);
    const rcp = await ctx.deps.stores.receptionists.create({
      tenantId,
      name: 'Front Desk',
      status: 'ready',
      phoneNumber: '+14155550100',
    });
    const world = { tenantId, auth, rcpId: rcp.id };
    // Postgres outage while texts are with the carrier.
    phases.push(
      await phase(stack, world, opts, 'postgres-outage', 1, async (handedOver, sending) => {
        await until(
          async () =>
            (await handedOver(Math.floor(opts.texts / 4))) && (await sending()).length > 0,
          120_000,
        );
        claimedAtOutage = (await sending()).length;
        log(
          `  stopping Postgres for ${secs(opts.outageMs)} with ${claimedAtOutage} text(s) claimed`,
        );
        await stack.servers.pg.stop('fast');
        await new Promise((r) => setTimeout(r, opts.outageMs));
        await stack.servers.pg.start();
        log('  Postgres is back');
        return 0;
      }),
    );
    // SIGKILLs mid-send.
    phases.push(
      await phase(stack, world, opts, 'worker-kill', 2, async (handedOver, sending) => {
        // A text claimed by a killed worker stays `sending` for minutes: counted once.
        const inFlight = new Set<string>();
        const total = opts.texts + opts.recipients;
        for (let k = 1; k <= opts.kills; k++) {
          const threshold = Math.floor((total * k) / (opts.kills + 1));
          const before = new Set(inFlight);
          const fresh = async () => (await sending()).filter((id) => !before.has(id)).length;
          await until(async () => (await handedOver(threshold)) && (await fresh()) > 0, 120_000);
          await stack.worker.kill();
          const claimed = await sending();
          for (const id of claimed) inFlight.add(id);
          log(
            `  SIGKILL ${k}/${opts.kills} with ${inFlight.size - before.size} text(s) newly claimed; restarting the worker`,
          );
          stack.worker = await stack.startWorker();
        }
        return inFlight.size;
      }),
    );
  } finally {
    await stack.destroy();
  }
  for (const p of phases) {
    const say = (what: string) => problems.push(`${p.name}: ${what}`);
    const open = p.accepted - FINAL.reduce((n, s) => n + (p.counts[s] ?? 0), 0);
    if (open) say(`${open} accepted text(s) not final`);
    if (p.handedTwice) say(`${p.handedTwice} text(s) handed to the carrier twice`);
    if (p.name === 'postgres-outage' && p.takenButFailed)
      say(`${p.takenButFailed} text(s) the carrier took counted failed`);
    if (p.takenButFailed + p.interruptedUnsent > p.inFlightAtKills)
      say(
        `${p.takenButFailed + p.interruptedUnsent} interrupted, more than the ${p.inFlightAtKills} in flight at the kills`,
      );
    if (p.sentWithoutOneEvent)
      say(`${p.sentWithoutOneEvent} sent text(s) without exactly one sms.sent`);
    if (p.campaign.status !== 'completed') say(`the campaign is ${p.campaign.status}`);
    if (p.campaign.completedEvents !== 1)
      say(`${p.campaign.completedEvents} campaign.completed events`);
    if (p.recipientsOff) say(`${p.recipientsOff} campaign count(s) differ from its messages`);
  }
  const sentTotal = phases.reduce(
    (n, p) => n + SENT.reduce((m, s) => m + (p.counts[s] ?? 0), 0),
    0,
  );
  const usage = phases.at(-1)?.usageCounted ?? 0;
  if (usage !== sentTotal) problems.push(`usage counts ${usage} texts, ${sentTotal} were sent`);
  const figures: PartResult['figures'] = [];
  for (const p of phases) {
    const sent = SENT.reduce((n, s) => n + (p.counts[s] ?? 0), 0);
    figures.push(
      [
        `${p.name}: texts accepted`,
        `${p.accepted} (${opts.texts} sent + ${opts.recipients} campaign)`,
      ],
      [
        `${p.name}: final`,
        `${tally2(p.counts)}; all final ${secs(p.finalAfterMs)} after the first`,
      ],
      [`${p.name}: handed to the carrier / twice`, `${p.handedOver} / ${p.handedTwice}`],
      [`${p.name}: carrier took → sent, with one sms.sent`, `${sent}, ${p.sentEvents} events`],
      [`${p.name}: carrier took → counted failed`, p.takenButFailed],
      [`${p.name}: interrupted before the carrier got it`, p.interruptedUnsent],
      [`${p.name}: texts claimed at the kills`, p.inFlightAtKills],
      [
        `${p.name}: campaign`,
        `${p.campaign.status}, sent ${p.campaign.sent}, failed ${p.campaign.failed}, ${p.campaign.completedEvents} campaign.completed`,
      ],
    );
  }
  figures.push(['postgres-outage: texts claimed when it stopped', claimedAtOutage]);
  figures.push(['usage: texts counted / sent', `${usage} / ${sentTotal}`]);
  return { figures, problems };
}

const tally2 = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k}×${n}`)
    .join(' ');

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${secs(timeoutMs)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function phase(
  stack: Stack,
  world: { tenantId: string; auth: string; rcpId: string },
  opts: SmsFaultsOptions,
  name: string,
  n: number,
  fault: (
    handedOver: (atLeast: number) => Promise<boolean>,
    sending: () => Promise<string[]>,
  ) => Promise<number>,
): Promise<Phase> {
  const { ctx } = stack.servers;
  const { knex, redis } = ctx.deps;
  opts.log(`  phase ${name}: ${opts.texts} texts and a campaign of ${opts.recipients}`);
  const started = Date.now();
  const res = await fetch(`${stack.api.baseUrl}/api/v1/campaigns`, {
    method: 'POST',
    headers: { authorization: world.auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: `Chaos ${name}`,
      receptionist_id: world.rcpId,
      message: 'Your boiler check is due; reply YES to book.',
      recipients: {
        phones: Array.from({ length: opts.recipients }, (_, i) => campaignPhone(i + n * 1_000)),
      },
      send_rate_per_minute: 600,
    }),
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 202) throw new Error(`campaign refused: ${res.status} ${await res.text()}`);
  const campaignId = ((await res.json()) as { id: string }).id;
  const outcomes: Outcome[] = [];
  const ids: string[] = [];
  await pool(opts.texts, 8, async (i) => {
    const to = `+1415${String(600 + n)}${String(1000 + i).padStart(4, '0')}`;
    const r = await fetch(`${stack.api.baseUrl}/api/v1/sms/send`, {
      method: 'POST',
      headers: { authorization: world.auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        receptionist_id: world.rcpId,
        to,
        message: `Reminder ${i}: your appointment is tomorrow at 09:30.`,
      }),
      signal: AbortSignal.timeout(10_000),
    });
    outcomes.push({ lane: 'sms', at: 0, ms: 0, status: r.status });
    if (r.status === 202) ids.push(((await r.json()) as { id: string }).id);
  });
  const refused = outcomes.filter((o) => o.status !== 202);
  if (refused.length) throw new Error(`texts refused: ${tally(refused)}`);
  const phaseIds = async () => [
    ...ids,
    ...((await knex('sms_messages').where({ campaign_id: campaignId }).pluck('id')) as string[]),
  ];
  const handedOver = async (atLeast: number) => {
    const log = await simulatorHandoffs(redis, ctx.config.queuePrefix);
    return (await phaseIds()).filter((id) => log[id]).length >= atLeast;
  };
  const sending = async () =>
    (await knex('sms_messages')
      .whereIn('id', await phaseIds())
      .where({ status: 'sending' })
      .pluck('id')) as string[];
  const inFlightAtKills = await fault(handedOver, sending);
  // Every text final (a claimed text of a killed worker: STALE_SENDING_MS after its claim),
  // and the campaign completed.
  const accepted = opts.texts + opts.recipients;
  const countsOf = async () => {
    const rows = (await knex('sms_messages')
      .whereIn('id', await phaseIds())
      .select('status')
      .count({ n: '*' })
      .groupBy('status')) as Array<{ status: string; n: string }>;
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  };
  const isFinal = async () => {
    const counts = await countsOf();
    const c = (await knex('campaigns').where({ id: campaignId }).first('status')) as {
      status: string;
    };
    return FINAL.reduce((s, k) => s + (counts[k] ?? 0), 0) === accepted && c.status === 'completed';
  };
  let lastLog = Date.now();
  await until(async () => {
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      opts.log(`  waiting for every text to be final: ${tally2(await countsOf())}`);
    }
    return isFinal();
  }, STALE_SENDING_MS + 90_000).catch((err: Error) => opts.log(`  ${err.message}`));
  const finalAfterMs = Date.now() - started;
  const all = await phaseIds();
  const rows = (await knex('sms_messages')
    .whereIn('id', all)
    .select('id', 'status', 'error_code')) as Array<{
    id: string;
    status: string;
    error_code: string | null;
  }>;
  const log = await simulatorHandoffs(redis, ctx.config.queuePrefix);
  const events = (await knex('events')
    .where({ tenant_id: world.tenantId, type: 'sms.sent' })
    .select(knex.raw("data->>'sms_id' AS sms_id"))) as Array<{ sms_id: string }>;
  const eventsOf = new Map<string, number>();
  for (const e of events) eventsOf.set(e.sms_id, (eventsOf.get(e.sms_id) ?? 0) + 1);
  const sent = rows.filter((r) => SENT.includes(r.status));
  const campaign = (await knex('campaigns').where({ id: campaignId }).first()) as {
    status: string;
    sent: number;
    failed: number;
  };
  const completedEvents = Number(
    (
      await knex('events')
        .where({ type: 'campaign.completed' })
        .whereRaw("data->>'campaign_id' = ?", [campaignId])
        .count<{ n: string }[]>({ n: '*' })
    )[0]?.n,
  );
  const campaignRows = (await knex('sms_messages')
    .where({ campaign_id: campaignId })
    .select('status')) as Array<{ status: string }>;
  const recipientsOff =
    Number(campaign.sent !== campaignRows.filter((r) => SENT.includes(r.status)).length) +
    Number(campaign.failed !== campaignRows.filter((r) => r.status === 'failed').length);
  const usage = (await knex('usage_periods')
    .where({ tenant_id: world.tenantId })
    .sum({ n: 'sms_sent' })) as Array<{ n: string | null }>;
  return {
    name,
    accepted,
    counts: await countsOf(),
    handedOver: all.filter((id) => log[id]).length,
    handedTwice: all.filter((id) => (log[id] ?? 0) > 1).length,
    takenButFailed: rows.filter((r) => r.status === 'failed' && log[r.id]).length,
    interruptedUnsent: rows.filter(
      (r) => r.status === 'failed' && r.error_code === 'send_interrupted' && !log[r.id],
    ).length,
    inFlightAtKills,
    sentEvents: sent.filter((r) => eventsOf.get(r.id) === 1).length,
    sentWithoutOneEvent:
      sent.filter((r) => eventsOf.get(r.id) !== 1).length +
      rows.filter((r) => !SENT.includes(r.status) && eventsOf.has(r.id)).length,
    usageCounted: Number(usage[0]?.n ?? 0),
    campaign: {
      status: campaign.status,
      sent: campaign.sent,
      failed: campaign.failed,
      completedEvents,
    },
    recipientsOff,
    finalAfterMs,
  };
}

export const smsFaultsPart: ChaosPart = {
  description:
    'texts and campaigns through a 10 s Postgres outage and 2 worker SIGKILLs: none lost or sent twice',
  run: ({ log }) =>
    runSmsFaults({
      texts: intEnv('CHAOS_TEXTS', 200),
      recipients: intEnv('CHAOS_RECIPIENTS', 200),
      outageMs: intEnv('CHAOS_SMS_OUTAGE_S', 10) * 1000,
      kills: intEnv('CHAOS_SMS_KILLS', 2),
      log,
    }),
};
