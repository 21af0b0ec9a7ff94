/**
 * SMS campaigns (issue 14): `npm run bench:campaigns`.
 *
 * On a fresh database `switchboard_bench_campaigns` with 10,000 leads (each with a name and
 * a phone), one API process and two worker processes (production settings, the simulated
 * carrier at SIMULATOR_SPEED=1), in rounds that alternate their order:
 * 1. Campaign: a 10,000-recipient campaign at the maximum rate (600 a minute): after its
 *    first message and a warm-up, one window in which the messages it made are counted
 *    (achieved rate vs configured; goal within 5 %) and the CPU of the API, both workers and
 *    the bench database's Postgres backends is read; then it is canceled.
 * 2. Single sends: the same kind of message, one `POST /api/v1/sms/send` each (no
 *    Idempotency-Key), paced at the same rate, same window and CPU reading. Goal: CPU per
 *    campaign message ≤ 1.2 × CPU per single send.
 * 3. With BENCH_CAMPAIGN_FULL=1, a last campaign runs to completion (about 17 minutes at 600 a
 *    minute): rate over the whole list, counters, one campaign.completed.
 * Then checks that the simulated carrier never got a message twice, prints the figures and
 * writes bench/.results/campaigns-<timestamp>.json.
 *
 * Before the rounds, BENCH_IDLE_S (30) seconds with nothing to send measure what the same
 * processes cost idle, to show the cost per message with and without that share.
 *
 * Knobs (env): BENCH_ROUNDS (3), BENCH_WINDOW_S (60), BENCH_WARMUP_S (5), BENCH_RATE (600),
 * BENCH_CAMPAIGN_RECIPIENTS (10,000), BENCH_CAMPAIGN_FULL=1, BENCH_ADMIN_DATABASE_URL,
 * REDIS_URL.
 */
import { closeRedis, createRedis } from '@switchboard/queues';
import { simulatorHandoffs } from '../apps/worker/src/sms/simulator';
import {
  campaignRound,
  createCampaign,
  idleCpuPerSecond,
  singleSendRound,
  type Window,
} from './campaigns/measure';
import { setupCampaignBench, type CampaignBench } from './campaigns/setup';
import { installChildCleanup, stopAllChildren } from './lib/children';
import { envInt } from './lib/env';
import { machineInfo } from './lib/machine';
import { deleteRedisPrefix } from './outbound/setup';
import { log, progressBar, sleep, step } from './lib/progress';
import { saveResult } from './lib/results';
import { median, table } from './lib/stats';

const PREFIX = '{sbbc}';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RATE_GOAL = 0.05;
const COST_GOAL = 1.2;

const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';

interface FullRun {
  recipients: number;
  seconds: number;
  perMinute: number;
  counters: { sent: number; failed: number; opted_out: number };
  completedEvents: number;
}

/** One campaign to the end: the rate over its whole list, and what it reported. */
async function fullRun(b: CampaignBench, perMinute: number): Promise<FullRun> {
  const campaign = await createCampaign(b, 'bench full run', perMinute);
  const bar = progressBar('full campaign'.padEnd(36), campaign.recipients, 'recipients');
  let c: { status: string; sent: number; failed: number; opted_out: number } | undefined;
  for (;;) {
    const res = await fetch(`${b.base}/api/v1/campaigns/${campaign.id}`, {
      headers: { authorization: `Bearer ${b.key}` },
    });
    c = (await res.json()) as typeof c;
    if (!c) throw new Error('no campaign');
    bar.update(c.sent + c.failed + c.opted_out);
    if (c.status === 'completed') break;
    await sleep(2000);
  }
  bar.stop();
  const span = (await b.knex.raw(
    `SELECT extract(epoch from max(created_at) - min(created_at))::float8 AS s, count(*)::int AS n
       FROM sms_messages WHERE campaign_id = ?`,
    [campaign.id],
  )) as { rows: Array<{ s: number; n: number }> };
  const row = span.rows[0] as { s: number; n: number };
  const events = (await b.knex.raw(
    "SELECT count(*)::int AS n FROM events WHERE type = 'campaign.completed' AND data->>'campaign_id' = ?",
    [campaign.id],
  )) as { rows: Array<{ n: number }> };
  return {
    recipients: campaign.recipients,
    seconds: row.s,
    // n messages over the span from the first to the last: n - 1 intervals.
    perMinute: ((row.n - 1) / row.s) * 60,
    counters: { sent: c.sent, failed: c.failed, opted_out: c.opted_out },
    completedEvents: events.rows[0]?.n ?? 0,
  };
}

async function main(): Promise<number> {
  installChildCleanup();
  const startedAt = new Date();
  const machine = machineInfo();
  log(
    `campaigns benchmark: nproc ${machine.nproc}, node ${machine.node}, load ${machine.loadavg.join(' ')}`,
  );
  const rounds = envInt('BENCH_ROUNDS', 3);
  const rate = envInt('BENCH_RATE', 600);
  const opts = {
    perMinute: rate,
    seconds: envInt('BENCH_WINDOW_S', 60),
    warmupS: envInt('BENCH_WARMUP_S', 5),
  };
  const redis = createRedis(REDIS_URL, 'worker');
  let b: CampaignBench | undefined;
  try {
    await deleteRedisPrefix(redis, PREFIX);
    b = await setupCampaignBench({
      database: 'switchboard_bench_campaigns',
      redisUrl: REDIS_URL,
      prefix: PREFIX,
      leads: envInt('BENCH_CAMPAIGN_RECIPIENTS', 10_000),
      workers: 2,
    });
    const idle = await idleCpuPerSecond(b, envInt('BENCH_IDLE_S', 30));
    const campaign: Window[] = [];
    const single: Window[] = [];
    for (let r = 1; r <= rounds; r++) {
      const order = r % 2 ? ['campaign', 'single'] : ['single', 'campaign'];
      for (const kind of order) {
        if (kind === 'campaign') campaign.push(await campaignRound(b, r, opts));
        else single.push(await singleSendRound(b, r, opts));
      }
    }
    const full = process.env.BENCH_CAMPAIGN_FULL === '1' ? await fullRun(b, rate) : null;
    const handoffs = await step('checking the carrier log', () => simulatorHandoffs(redis, PREFIX));
    const twice = Object.values(handoffs).filter((n) => n > 1).length;

    const achieved = median(campaign.map((w) => w.perMinute));
    const deviation = Math.abs(achieved - rate) / rate;
    const ratios = campaign.map((w, i) => w.cpuMs.total / (single[i]?.cpuMs.total ?? Number.NaN));
    const costRatio =
      median(campaign.map((w) => w.cpuMs.total)) / median(single.map((w) => w.cpuMs.total));
    // The same without the idle processes' share: what one more message costs.
    const marginal = (w: Window) => w.cpuMs.total - (idle * 1000 * w.seconds) / w.messages;
    const marginalRatio = median(campaign.map(marginal)) / median(single.map(marginal));
    const row = (label: string, w: Window) => [
      label,
      fmt(w.seconds, 1),
      fmt(w.messages),
      fmt(w.perMinute, 1),
      fmt(w.cpuMs.api, 3),
      fmt(w.cpuMs.workers, 3),
      fmt(w.cpuMs.postgres, 3),
      fmt(w.cpuMs.total, 3),
    ];
    const report = [
      '',
      'Campaigns benchmark (issue 14)',
      `machine: ${machine.nproc} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}; load before: ${machine.loadavg.join(' ')}`,
      `one API process, two worker processes, ${fmt(b.phones.length)} recipients, ${rate} a minute configured, windows of ${opts.seconds} s`,
      '',
      table([
        ['window', 's', 'messages', 'per minute', 'CPU ms/msg api', 'workers', 'postgres', 'total'],
        ...campaign.map((w, i) => row(`campaign #${i + 1}`, w)),
        ...single.map((w, i) => row(`POST /sms/send #${i + 1}`, w)),
      ]),
      `achieved rate: ${fmt(achieved, 1)} a minute (median) vs ${rate} configured: ${fmt(deviation * 100, 2)} % off (goal within ${RATE_GOAL * 100} %: ${deviation <= RATE_GOAL ? 'MET' : 'MISSED'})`,
      `CPU per message, campaign / single send: ${fmt(costRatio, 2)} × (goal ≤ ${COST_GOAL}: ${costRatio <= COST_GOAL ? 'MET' : 'MISSED'}); per round ${ratios.map((x) => fmt(x, 2)).join(' / ')}`,
      `idle processes: ${fmt(idle * 1000, 1)} ms of CPU a second; without that share, per message: campaign ${fmt(median(campaign.map(marginal)), 3)} ms, single send ${fmt(median(single.map(marginal)), 3)} ms, ratio ${fmt(marginalRatio, 2)} ×`,
      full
        ? `full run: ${fmt(full.recipients)} recipients in ${fmt(full.seconds, 1)} s = ${fmt(full.perMinute, 1)} a minute; sent ${fmt(full.counters.sent)}, failed ${fmt(full.counters.failed)}, opted out ${fmt(full.counters.opted_out)}; campaign.completed events: ${full.completedEvents}`
        : 'full run: skipped (BENCH_CAMPAIGN_FULL=1 runs one campaign to completion)',
      `carrier log: ${fmt(Object.keys(handoffs).length)} messages handed over, ${twice} of them more than once`,
    ];
    process.stdout.write(`${report.join('\n')}\n`);
    saveResult(
      'campaigns',
      startedAt,
      {
        benchmark: 'campaigns',
        command: 'npm run bench:campaigns',
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        machine,
        options: { rounds, rate, ...opts, recipients: b.phones.length },
        campaign,
        single,
        full,
        idleCpuMsPerSecond: idle * 1000,
        handoffs: { messages: Object.keys(handoffs).length, twice },
        targets: {
          rate: { achieved, deviation, goal: RATE_GOAL, met: deviation <= RATE_GOAL },
          cost: {
            ratio: costRatio,
            marginalRatio,
            perRound: ratios,
            goal: COST_GOAL,
            met: costRatio <= COST_GOAL,
          },
        },
      },
      log,
    );
    return twice === 0 ? 0 : 1;
  } finally {
    await stopAllChildren();
    await b?.knex.destroy();
    await deleteRedisPrefix(redis, PREFIX).catch(() => undefined);
    await closeRedis(redis);
  }
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    log(
      `\ncampaigns benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    await stopAllChildren();
    process.exit(1);
  },
);
