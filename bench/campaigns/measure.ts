import type { Knex } from '@switchboard/db';
import { cpuSecondsOf, cpuSnapshot } from '../lib/proc';
import { log, progressBar, sleep } from '../lib/progress';
import type { CampaignBench } from './setup';

/** One measured window: what was made in it and what it cost. */
export interface Window {
  seconds: number;
  /** SMS rows created in the window (campaign messages, or accepted POSTs). */
  messages: number;
  perMinute: number;
  /** CPU milliseconds per message: API process, worker processes, the bench DB's backends. */
  cpuMs: { api: number; workers: number; postgres: number; total: number };
}

interface Snapshot {
  at: number;
  api: number;
  workers: number;
  backends: Map<number, number>;
}

const dbNow = async (knex: Knex): Promise<number> =>
  ((await knex.raw('SELECT now() AS t')) as { rows: Array<{ t: Date }> }).rows[0]?.t.getTime() ??
  Date.now();

async function snapshot(b: CampaignBench): Promise<Snapshot> {
  const pids = (await b.knex.raw(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  )) as { rows: Array<{ pid: number }> };
  return {
    at: await dbNow(b.knex),
    api: cpuSnapshot(b.api.proc.pid)?.group ?? Number.NaN,
    workers: b.workers.reduce((s, w) => s + (cpuSnapshot(w.proc.pid)?.group ?? Number.NaN), 0),
    backends: cpuSecondsOf(pids.rows.map((r) => r.pid)),
  };
}

/** CPU the backends spent between two snapshots (a backend born in between: all of it). */
function backendsSpent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, s] of after) total += s - (before.get(pid) ?? 0);
  return total;
}

/** Waits `seconds` with a progress bar. */
async function hold(label: string, seconds: number): Promise<void> {
  const bar = progressBar(label.padEnd(36), seconds, 's');
  for (let s = 1; s <= seconds; s++) {
    await sleep(1000);
    bar.update(s);
  }
  bar.stop();
}

/** Measures `seconds` of whatever runs now; `count` counts the messages made in [from, to). */
async function measureWindow(
  b: CampaignBench,
  label: string,
  seconds: number,
  count: (from: Date, to: Date) => Promise<number>,
): Promise<Window> {
  const before = await snapshot(b);
  await hold(label, seconds);
  const after = await snapshot(b);
  const messages = await count(new Date(before.at), new Date(after.at));
  const span = (after.at - before.at) / 1000;
  const per = (cpuS: number) => (cpuS * 1000) / Math.max(1, messages);
  const api = per(after.api - before.api);
  const workers = per(after.workers - before.workers);
  const postgres = per(backendsSpent(before.backends, after.backends));
  return {
    seconds: span,
    messages,
    perMinute: (messages / span) * 60,
    cpuMs: { api, workers, postgres, total: api + workers + postgres },
  };
}

/**
 * CPU seconds per second of the same processes with nothing to send (relay polls, tickers,
 * stalled-job checks): the part of every window's figures that does not depend on messages.
 */
export async function idleCpuPerSecond(b: CampaignBench, seconds: number): Promise<number> {
  // Counted as one message, so that the window's "per message" figures are its totals.
  const w = await measureWindow(b, 'idle', seconds, async () => 1);
  return w.cpuMs.total / 1000 / w.seconds;
}

async function post(b: CampaignBench, path: string, body: unknown): Promise<Response> {
  return fetch(`${b.base}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${b.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const countCreated = (b: CampaignBench, campaignId: string | null) => (from: Date, to: Date) =>
  b
    .knex('sms_messages')
    .where('created_at', '>=', from)
    .andWhere('created_at', '<', to)
    .andWhere((q) =>
      campaignId ? q.where({ campaign_id: campaignId }) : q.whereNull('campaign_id'),
    )
    .count({ n: '*' })
    .then((r) => Number((r[0] as { n: string }).n));

/** Messages of a campaign (or the single sends) still on their way to the carrier. */
const inFlight = async (b: CampaignBench): Promise<number> => {
  const r = await b.knex('sms_messages').whereIn('status', ['queued', 'sending']).count({ n: '*' });
  return Number((r[0] as { n: string }).n);
};

async function settle(b: CampaignBench): Promise<void> {
  for (let i = 0; i < 600 && (await inFlight(b)) > 0; i++) await sleep(100);
}

/** Creates the campaign (every lead, `{{name}}` rendered) at `perMinute`. */
export async function createCampaign(b: CampaignBench, name: string, perMinute: number) {
  const res = await post(b, '/campaigns', {
    name,
    receptionist_id: b.receptionistId,
    message:
      'Hi {{name}}, spring boiler checks are open: reply YES to book. Reply STOP to opt out.',
    recipients: { lead_filter: { tag: 'bench' } },
    send_rate_per_minute: perMinute,
  });
  const body = (await res.json()) as { id: string; recipients: number };
  if (res.status !== 202)
    throw new Error(`campaign refused: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * A 10,000-recipient campaign at `perMinute` on the running workers: after the first message
 * and a warm-up, one window of `seconds` (messages made in it, CPU), then canceled.
 */
export async function campaignRound(
  b: CampaignBench,
  round: number,
  opts: { perMinute: number; seconds: number; warmupS: number },
): Promise<Window> {
  const campaign = await createCampaign(b, `bench round ${round}`, opts.perMinute);
  for (let i = 0; i < 600; i++) {
    const r = await b.knex('sms_messages').where({ campaign_id: campaign.id }).first('id');
    if (r) break;
    await sleep(50);
  }
  await sleep(opts.warmupS * 1000);
  const w = await measureWindow(
    b,
    `campaign #${round}`,
    opts.seconds,
    countCreated(b, campaign.id),
  );
  const cancel = await post(b, `/campaigns/${campaign.id}/cancel`, undefined);
  if (cancel.status !== 200) throw new Error(`cancel refused: ${cancel.status}`);
  await settle(b);
  return w;
}

/**
 * The same messages one POST /sms/send each (no Idempotency-Key: the cheapest send), paced
 * at `perMinute` from one client, for the same window.
 */
export async function singleSendRound(
  b: CampaignBench,
  round: number,
  opts: { perMinute: number; seconds: number; warmupS: number },
): Promise<Window> {
  let stop = false;
  let sent = 0;
  let refused = 0;
  const intervalMs = 60_000 / opts.perMinute;
  const pacing = (async () => {
    const started = Date.now();
    const pending: Array<Promise<void>> = [];
    while (!stop) {
      const i = sent++;
      pending.push(
        post(b, '/sms/send', {
          receptionist_id: b.receptionistId,
          to: b.phones[(round * 3_000 + i) % b.phones.length],
          message: `Hi Customer ${i}, spring boiler checks are open: reply YES to book. Reply STOP to opt out.`,
        }).then(async (res) => {
          await res.arrayBuffer();
          if (res.status !== 202) refused++;
        }),
      );
      const next = started + sent * intervalMs;
      await sleep(Math.max(0, next - Date.now()));
    }
    await Promise.all(pending);
  })();
  await sleep(opts.warmupS * 1000);
  const w = await measureWindow(b, `POST /sms/send #${round}`, opts.seconds, countCreated(b, null));
  stop = true;
  await pacing;
  if (refused > 0) log(`  ${refused} sends were refused`);
  await settle(b);
  return w;
}
