import type { ChaosPart, PartResult } from '../part';
import { accountProblems, ackedRefs, awaitDelivery } from '../harness/accounting';
import { pool, tally, type Outcome } from '../harness/client';
import { intEnv, secs } from '../harness/env';
import { callSubscriber, startStack } from '../harness/stack';

export interface WorkerKillOptions {
  events: number;
  kills: number;
  /**
   * WEBHOOK_TIMEOUT_MS. A killed worker's in-flight slots free themselves one attempt
   * timeout (plus a margin) later, so this bounds how long deliveries wait after a kill.
   */
  webhookTimeoutMs?: number;
  /**
   * Whether in-flight deliveries attempted again later than WEBHOOK_TIMEOUT_MS + 5 s after a
   * kill are a problem (`npm run chaos`), or only a figure (`npm test`, where a busy machine
   * can take longer than that just to start the new worker process).
   */
  enforceInFlightBound?: boolean;
  /**
   * Worker processes running at once (default 1). With 2 or more, each kill hits one of
   * them in turn and another replica recovers its attempts: the figure then shows the
   * recovery timers alone, without the start-up of the restarted process.
   */
  workers?: number;
  /**
   * Spreads the ingestion over at least this long (default: as fast as it goes). Each kill
   * waits for its in-flight attempts to come back (up to WEBHOOK_TIMEOUT_MS + 5 s), so on a
   * fast machine an unpaced run delivers everything before the last kills, which then
   * interrupt nothing: pacing keeps every kill in the middle of the deliveries.
   */
  ingestOverMs?: number;
  /** How long the receiver takes to answer (default 5 ms): what keeps attempts in flight. */
  receiverDelayMs?: number;
  log(line: string): void;
}

/** The production default of WEBHOOK_TIMEOUT_MS. */
const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

/** Deliveries in flight to one subscription at once: the most a SIGKILL can interrupt. */
const IN_FLIGHT = 10;

/**
 * Worker SIGKILLed during deliveries: `events` call.started messages are ingested through a
 * real API process while the worker process (real HTTPS to a receiver on 127.0.0.1) is
 * SIGKILLed `kills` times, evenly over the deliveries, and restarted each time. Every 202
 * must end delivered; duplicates may only come from attempts in flight at a kill (at most
 * `IN_FLIGHT` each), and always carry the same event id.
 */
export async function runWorkerKill(opts: WorkerKillOptions): Promise<PartResult> {
  const { events, kills, log } = opts;
  const stack = await startStack({
    // A few milliseconds per request keep deliveries in flight when the worker is killed.
    routes: {
      '/hook': (_req, res) =>
        void setTimeout(() => res.writeHead(200).end(), opts.receiverDelayMs ?? 5),
    },
    workerEnv: {
      WORKER_CONCURRENCY: '20',
      WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION: String(IN_FLIGHT),
      ...(opts.webhookTimeoutMs ? { WEBHOOK_TIMEOUT_MS: String(opts.webhookTimeoutMs) } : {}),
    },
  });
  try {
    const fleet = [stack.worker];
    while (fleet.length < (opts.workers ?? 1)) fleet.push(await stack.startWorker());
    const { receptionistId } = await callSubscriber(stack, stack.hookUrl('/hook'));
    const distinct = () =>
      new Set(stack.receiver.requests.map((r) => r.headers['x-service-event-id'])).size;
    const outcomes: Outcome[] = [];
    const started = Date.now();
    const spacingMs = (opts.ingestOverMs ?? 0) / events;
    const ingestion = pool(events, 8, async (i) => {
      const due = started + i * spacingMs;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      outcomes.push(await stack.ingest(receptionistId));
    });
    let killed = 0;
    const resumeMs: number[] = [];
    const inFlightBackMs: number[] = [];
    const killer = (async () => {
      for (let k = 1; k <= kills; k++) {
        const threshold = Math.floor((events * k) / (kills + 1));
        const deadline = Date.now() + 120_000;
        while (distinct() < threshold && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 20));
        if (distinct() < threshold) throw new Error(`stuck below ${threshold} deliveries`);
        const victim = (k - 1) % fleet.length;
        await (fleet[victim] as (typeof fleet)[number]).kill();
        killed++;
        const at = Date.now();
        const before = distinct();
        // The attempts the killed process had in flight (claimed, or taken by an event job
        // and sent, and not recorded): each must be attempted again within
        // WEBHOOK_TIMEOUT_MS + 5 s of the kill.
        const seenFrom = stack.receiver.requests.length;
        const sent = new Set(
          stack.receiver.requests.map((r) => String(r.headers['x-service-event-id'])),
        );
        const delivering = async () =>
          (
            (await stack.servers.ctx.deps
              .knex('webhook_deliveries')
              .where({ status: 'delivering' })
              .orWhere({ status: 'pending', attempts: 0, claims: 0 })
              .select('event_id', 'status')) as Array<{ event_id: string; status: string }>
          )
            .filter((r) => r.status === 'delivering' || sent.has(r.event_id))
            .map((r) => r.event_id);
        let inFlight = await delivering();
        // The replacement starts at once; the figures are read while it starts (with other
        // replicas running, the recovery does not wait for it).
        const restarting = stack.startWorker();
        let readyAt = Infinity;
        restarting.then(
          () => (readyAt = Date.now()),
          () => undefined,
        );
        if (fleet.length > 1) {
          // The other replicas' attempts end within milliseconds (the receiver answers in 5):
          // still claimed 2 s after the kill means claimed by the dead process.
          await new Promise((r) => setTimeout(r, 2000));
          const still = new Set(await delivering());
          inFlight = inFlight.filter((id) => still.has(id));
        }
        log(`  SIGKILL ${k}/${kills} at ${before} events delivered; restarting the worker`);
        while (distinct() === before && Date.now() - at < 60_000)
          await new Promise((r) => setTimeout(r, 20));
        resumeMs.push(Date.now() - at);
        const resumed = Date.now() - at;
        const again = () => {
          const ids = new Set(
            stack.receiver.requests.slice(seenFrom).map((r) => r.headers['x-service-event-id']),
          );
          return inFlight.every((id) => ids.has(id));
        };
        while (!again() && Date.now() - at < 90_000) await new Promise((r) => setTimeout(r, 50));
        const back = again() ? Date.now() - at : Infinity;
        inFlightBackMs.push(back);
        fleet[victim] = await restarting;
        stack.worker = fleet[victim] as (typeof fleet)[number];
        const ready = readyAt - at;
        log(
          `  worker ready after ${secs(ready)}, deliveries resumed after ${secs(resumed)}, ` +
            `${inFlight.length} in flight at the kill all attempted again after ${secs(back)}`,
        );
      }
    })();
    await Promise.all([ingestion, killer]);
    const acked = ackedRefs(outcomes);
    const a = await awaitDelivery({
      knex: stack.servers.ctx.deps.knex,
      acked,
      requests: stack.receiver.requests,
      routePath: '/hook',
      timeoutMs: 120_000,
      log,
    });
    const elapsed = Date.now() - started;
    // A delivery the receiver got from a worker killed before it recorded the result stays
    // `delivering` until its job is recovered (and delivered again): wait for every row.
    const notFinal = async () =>
      Number(
        (
          await stack.servers.ctx.deps
            .knex('webhook_deliveries')
            .whereNot({ status: 'succeeded' })
            .count<{ n: string }[]>({ n: '*' })
        )[0]?.n,
      );
    let open = await notFinal();
    const finalDeadline = Date.now() + 60_000;
    let lastLog = Date.now();
    while (open && Date.now() < finalDeadline) {
      await new Promise((r) => setTimeout(r, 200));
      open = await notFinal();
      if (Date.now() - lastLog > 5000) {
        lastLog = Date.now();
        log(`  waiting for ${open} delivery row(s) to be final`);
      }
    }
    const settled = Date.now() - started;
    const problems = accountProblems(a);
    const refused = outcomes.filter((o) => o.status !== 202);
    if (refused.length) problems.push(`ingestion answered ${tally(refused)} (all 202 expected)`);
    if (killed !== kills) problems.push(`only ${killed} of ${kills} kills happened`);
    if (a.duplicates > kills * IN_FLIGHT)
      problems.push(
        `${a.duplicates} duplicates, more than ${kills} kills × ${IN_FLIGHT} in flight`,
      );
    if (open) problems.push(`${open} delivery row(s) not succeeded`);
    const bound = (opts.webhookTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS) + 5_000;
    const late = inFlightBackMs.filter((ms) => ms > bound);
    if (late.length && opts.enforceInFlightBound)
      problems.push(
        `in-flight deliveries of ${late.length} kill(s) attempted again later than ${secs(bound)}`,
      );
    return {
      figures: [
        ['events acked (202)', `${a.acked} of ${events}`],
        ['worker SIGKILLs', `${killed} (${fleet.length} worker process(es) running)`],
        ['delivered (distinct event ids)', a.acked - a.undelivered.length - a.uncommitted.length],
        ['lost', a.undelivered.length + a.uncommitted.length],
        ['duplicate requests', `${a.duplicates} (bound: ${kills} × ${IN_FLIGHT} in flight)`],
        [
          'deliveries resume after a kill (max)',
          `${secs(Math.max(0, ...resumeMs))} (new process started and ready included)`,
        ],
        [
          'in-flight deliveries attempted again after a kill (max)',
          `${secs(Math.max(0, ...inFlightBackMs))} (bound: WEBHOOK_TIMEOUT_MS + 5 s = ${secs(bound)})`,
        ],
        ['… after each kill', inFlightBackMs.map((ms) => secs(ms)).join(', ')],
        ['event id header ≠ body id', a.mismatched],
        ['delivery rows not succeeded', open],
        ['every row final, from the first request', secs(settled)],
        ['duration', `${secs(elapsed)} (${((a.acked * 1000) / elapsed).toFixed(0)} events/s)`],
      ],
      problems,
    };
  } finally {
    await stack.destroy();
  }
}

export const workerKillPart: ChaosPart = {
  description: 'worker SIGKILLed 5 times during 2,000 deliveries: nothing lost, no stray duplicate',
  run: ({ log }) => {
    const kills = intEnv('CHAOS_KILLS', 5);
    return runWorkerKill({
      events: intEnv('CHAOS_EVENTS', 2000),
      kills,
      enforceInFlightBound: true,
      // Each kill's recovery window (WEBHOOK_TIMEOUT_MS + 5 s) once per kill, and one more.
      ingestOverMs: (kills + 1) * (DEFAULT_WEBHOOK_TIMEOUT_MS + 5_000),
      // At the paced rate (about 20 events a second) a 250 ms answer keeps about five
      // attempts in flight at every kill, under the lane's cap of IN_FLIGHT.
      receiverDelayMs: 250,
      workers: intEnv('CHAOS_WORKERS', 1),
      log,
    });
  },
};
