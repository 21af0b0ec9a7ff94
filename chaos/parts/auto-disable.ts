import type { ChaosPart, PartResult } from '../part';
import { pool, tally, type Outcome } from '../harness/client';
import { intEnv, secs } from '../harness/env';
import { callSubscriber, startStack, type Stack } from '../harness/stack';

export interface AutoDisableOptions {
  /** Subscriptions driven to auto-disable, one after another. */
  trials: number;
  /** call.started events ingested for each (all at once, 8 at a time). */
  events: number;
  log(line: string): void;
}

/** Deliveries in flight to one subscription at once: many attempts on the wire at the disable. */
const IN_FLIGHT = 10;
/** How long the failing receiver takes to answer 503: attempts overlap the disable. */
const ANSWER_MS = 200;
/** A POST that arrives later than this after `disabled_at` was sent after the disable. */
const ON_THE_WIRE_MS = 1_000;
/** How long the check waits for the attempts of the POSTs received to be recorded. */
const RECORD_WAIT_MS = 10_000;

interface Post {
  eventId: string;
  at: number;
}

interface Trial {
  deliveries: number;
  canceled: number;
  failed: number;
  attemptsColumn: number;
  attemptRows: number;
  posts: number;
  /** Deliveries whose `attempts` differs from their attempt rows or from the POSTs sent. */
  mismatched: string[];
  /** POSTs that arrived after `disabled_at`, and how long after (ms). */
  afterDisable: number[];
  /** POSTs received before `disabled_at` and answered after it: on the wire at the disable. */
  onTheWire: number;
  /** Canceled deliveries that had attempts: retries cut short, or attempts on the wire. */
  canceledAttempted: number;
  disabledAfterMs: number;
}

/**
 * Auto-disable with attempts in flight: a subscription whose receiver answers every POST
 * with a 503 (after 200 ms, up to 10 attempts at once) gets `events` events at once, fails
 * 20 deliveries in a row, and is disabled while attempts are on the wire; its open
 * deliveries are canceled. For every delivery, `attempts` must equal its attempt rows and
 * the POSTs its receiver got (docs/API.md, Webhooks); no POST may leave after the disable.
 * Repeated `trials` times, a new subscription each.
 */
export async function runAutoDisable(opts: AutoDisableOptions): Promise<PartResult> {
  const { trials, events, log } = opts;
  const posts = new Map<string, Post[]>();
  const routes: Record<string, Parameters<typeof startStack>[0]['routes'][string]> = {};
  for (let t = 1; t <= trials; t++) {
    const list: Post[] = [];
    posts.set(`/failing-${t}`, list);
    routes[`/failing-${t}`] = (req, res) => {
      list.push({ eventId: req.headers['x-service-event-id'] as string, at: Date.now() });
      setTimeout(() => res.writeHead(503).end(), ANSWER_MS);
    };
  }
  const stack = await startStack({
    routes,
    workerEnv: {
      WORKER_CONCURRENCY: '20',
      WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION: String(IN_FLIGHT),
    },
  });
  const problems: string[] = [];
  const results: Trial[] = [];
  const refused: Outcome[] = [];
  try {
    for (let t = 1; t <= trials; t++) {
      const path = `/failing-${t}`;
      const result = await trial(stack, path, posts.get(path) as Post[], events, refused, log);
      results.push(result);
      log(
        `  trial ${t}/${trials}: disabled after ${secs(result.disabledAfterMs)}, ` +
          `${result.canceled} canceled, ${result.posts} POSTs, ${result.attemptRows} attempt rows, ` +
          `${result.mismatched.length} delivery(ies) off`,
      );
    }
  } finally {
    await stack.destroy();
  }
  const sum = (f: (r: Trial) => number) => results.reduce((n, r) => n + f(r), 0);
  const mismatched = results.flatMap((r) => r.mismatched);
  const late = results.flatMap((r) => r.afterDisable);
  const sent = late.filter((ms) => ms > ON_THE_WIRE_MS);
  if (refused.length) problems.push(`ingestion answered ${tally(refused)} (all 202 expected)`);
  if (mismatched.length)
    problems.push(
      `${mismatched.length} delivery(ies) whose attempts ≠ attempt rows or POSTs, e.g. ${mismatched[0]}`,
    );
  if (sum((r) => r.attemptsColumn) !== sum((r) => r.posts))
    problems.push(
      `attempts counted ${sum((r) => r.attemptsColumn)} ≠ POSTs ${sum((r) => r.posts)}`,
    );
  if (sent.length)
    problems.push(`${sent.length} POST(s) more than ${ON_THE_WIRE_MS} ms after the disable`);
  if (results.length !== trials) problems.push(`only ${results.length} of ${trials} trials ran`);
  return {
    figures: [
      ['trials (subscriptions disabled)', `${results.length} × ${events} events`],
      [
        'deliveries: failed / canceled at the disable',
        `${sum((r) => r.failed)} / ${sum((r) => r.canceled)}`,
      ],
      ['attempts on the wire at the disable', sum((r) => r.onTheWire)],
      ['canceled deliveries with attempts', sum((r) => r.canceledAttempted)],
      ['POSTs received', sum((r) => r.posts)],
      ['attempt rows', sum((r) => r.attemptRows)],
      ['sum of the deliveries’ attempts', sum((r) => r.attemptsColumn)],
      ['deliveries whose attempts ≠ rows or POSTs', mismatched.length],
      [
        'POSTs arriving after disabled_at',
        `${late.length} (max ${Math.max(0, ...late)} ms after; on the wire before it)`,
      ],
      ['disable reached after (max)', secs(Math.max(0, ...results.map((r) => r.disabledAfterMs)))],
    ],
    problems,
  };
}

async function trial(
  stack: Stack,
  path: string,
  posts: Post[],
  events: number,
  refused: Outcome[],
  log: (line: string) => void,
): Promise<Trial> {
  const knex = stack.servers.ctx.deps.knex;
  const { receptionistId, subscription } = await callSubscriber(stack, stack.hookUrl(path));
  const started = Date.now();
  await pool(events, 8, async () => {
    const o = await stack.ingest(receptionistId);
    if (o.status !== 202) refused.push(o);
  });
  const sub = async () =>
    (await knex('webhook_subscriptions').where({ id: subscription.id }).first()) as {
      is_active: boolean;
      disabled_at: Date | null;
      disabled_reason: string | null;
    };
  let s = await sub();
  const deadline = Date.now() + 120_000;
  while (!s.disabled_at && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    s = await sub();
  }
  if (!s.disabled_at) throw new Error(`${path}: subscription not disabled within 120 s`);
  const disabledAt = s.disabled_at.getTime();
  // Attempts on the wire at the disable still end and are recorded: wait for every row.
  const open = async () =>
    Number(
      (
        await knex('webhook_deliveries')
          .where({ subscription_id: subscription.id })
          .whereIn('status', ['pending', 'delivering'])
          .count<{ n: string }[]>({ n: '*' })
      )[0]?.n,
    );
  const settle = Date.now() + 60_000;
  while ((await open()) > 0 && Date.now() < settle) await new Promise((r) => setTimeout(r, 200));
  if ((await open()) > 0) log(`  ${path}: deliveries still open 60 s after the disable`);
  // A POST on the wire when the rows settled reaches the receiver within its answer time;
  // its attempt is recorded after the answer, ANSWER_MS later. Wait for the attempt rows to
  // count every POST received (a positive signal), at most RECORD_WAIT_MS: a POST that is
  // never recorded stays a mismatch below.
  await new Promise((r) => setTimeout(r, ANSWER_MS * 5));
  const attemptRows = async () =>
    Number(
      (
        await knex('webhook_delivery_attempts_all as a')
          .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
          .where({ 'd.subscription_id': subscription.id })
          .count<{ n: string }[]>({ n: '*' })
      )[0]?.n,
    );
  const recordedBy = Date.now() + RECORD_WAIT_MS;
  while ((await attemptRows()) < posts.length && Date.now() < recordedBy)
    await new Promise((r) => setTimeout(r, 200));
  const rows = (await knex('webhook_deliveries as d')
    .where({ 'd.subscription_id': subscription.id })
    .select(
      'd.id',
      'd.event_id',
      'd.status',
      'd.attempts',
      knex.raw(
        '(SELECT count(*)::int FROM webhook_delivery_attempts_all a WHERE a.delivery_id = d.id) AS rows',
      ),
    )) as Array<{ id: string; event_id: string; status: string; attempts: number; rows: number }>;
  const postsOf = new Map<string, number>();
  for (const p of posts) postsOf.set(p.eventId, (postsOf.get(p.eventId) ?? 0) + 1);
  const mismatched = rows
    .filter((r) => r.attempts !== r.rows || r.attempts !== (postsOf.get(r.event_id) ?? 0))
    .map(
      (r) =>
        `${r.id} (${r.status}): attempts ${r.attempts}, rows ${r.rows}, POSTs ${postsOf.get(r.event_id) ?? 0}`,
    );
  return {
    deliveries: rows.length,
    canceled: rows.filter((r) => r.status === 'canceled').length,
    failed: rows.filter((r) => r.status === 'failed').length,
    attemptsColumn: rows.reduce((n, r) => n + r.attempts, 0),
    attemptRows: rows.reduce((n, r) => n + r.rows, 0),
    posts: posts.length,
    mismatched,
    afterDisable: posts.filter((p) => p.at > disabledAt).map((p) => p.at - disabledAt),
    onTheWire: posts.filter((p) => p.at <= disabledAt && p.at + ANSWER_MS > disabledAt).length,
    canceledAttempted: rows.filter((r) => r.status === 'canceled' && r.attempts > 0).length,
    disabledAfterMs: disabledAt - started,
  };
}

export const autoDisablePart: ChaosPart = {
  description:
    'subscriptions auto-disabled with attempts in flight: attempts = attempt rows = POSTs',
  run: ({ log }) =>
    runAutoDisable({
      trials: intEnv('CHAOS_TRIALS', 5),
      events: intEnv('CHAOS_EVENTS_PER_TRIAL', 80),
      log,
    }),
};
