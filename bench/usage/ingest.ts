import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { ApiKeysStore, ReceptionistsStore, TenantsStore, type Knex } from '@switchboard/db';
import { answeredCall } from '@switchboard/simulation';
import { cpuSecondsOf, cpuSnapshot } from '../lib/proc';
import { progressBar } from '../lib/progress';

/**
 * `call.ended` ingestion for the usage benchmark. A metered message ends `completed`
 * (end_reason caller_hangup) and is counted; the baseline is the very same message with
 * end_reason `voicemail`: ingestion then does every statement it does for a completed call
 * (message id, call row, call.completed in the outbox) except the metering one.
 */
export type IngestMode = 'metered' | 'baseline';

/** Who takes the calls: fresh tenants (plans no call crosses) and their receptionists. */
export type IngestTarget = Array<{ tenantId: string; receptionists: string[] }>;

export async function ingestTenants(
  knex: Knex,
  tenants: number,
  receptionistsEach: number,
): Promise<IngestTarget> {
  const target: IngestTarget = [];
  for (let t = 0; t < tenants; t++) {
    const tenant = await new TenantsStore(knex).create({
      name: `Usage bench ingest ${randomBytes(3).toString('hex')}`,
      planMinutes: 100_000_000,
    });
    await new ApiKeysStore(knex).create({ tenantId: tenant.id, scopes: ['read'] });
    const receptionists: string[] = [];
    for (let r = 0; r < receptionistsEach; r++) {
      const created = await new ReceptionistsStore(knex).create({
        tenantId: tenant.id,
        name: `Line ${r + 1}`,
        status: 'ready',
        phoneNumber: `+1415666${String(r).padStart(4, '0')}`,
      });
      receptionists.push(created.id);
    }
    target.push({ tenantId: tenant.id, receptionists });
  }
  return target;
}

/** Builds one message per request: a new call each time, spread over the receptionists. */
export function messageMaker(target: IngestTarget, mode: IngestMode): () => string {
  // Round robin over tenants first, so that consecutive calls belong to different tenants.
  const order: string[] = [];
  const each = target[0]?.receptionists.length ?? 0;
  for (let r = 0; r < each; r++) for (const t of target) order.push(t.receptionists[r] as string);
  const template = answeredCall(
    {
      receptionistId: order[0] as string,
      receptionistName: 'Line 1',
      direction: 'inbound',
      businessPhone: '+14156660000',
      customerPhone: '+14155550123',
      startedAt: new Date(Date.now() - 120_000),
    },
    'booked',
  ).ended;
  const run = randomBytes(4).toString('hex');
  let n = 0;
  return () => {
    n += 1;
    return JSON.stringify({
      ...template,
      id: `bench_${run}_${n}`,
      provider_call_id: `bench_${run}_${n}`,
      receptionist_id: order[n % order.length],
      end_reason: mode === 'metered' ? 'caller_hangup' : 'voicemail',
    });
  };
}

let stopCurrent: (() => void) | null = null;
/** Stops a running autocannon (Ctrl-C). */
export const stopIngest = (): void => stopCurrent?.();

/** One autocannon run of `duration` seconds posting a new message per request. */
export function ingestRun(
  title: string,
  base: string,
  ingestToken: string,
  next: () => string,
  opts: { connections: number; duration: number },
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const bar = progressBar(title.padEnd(36), opts.duration, 's');
    let ticks = 0;
    const instance = autocannon(
      {
        url: base,
        connections: opts.connections,
        duration: opts.duration,
        requests: [
          {
            method: 'POST',
            path: '/internal/v1/telephony/events',
            headers: {
              authorization: `Bearer ${ingestToken}`,
              'content-type': 'application/json',
            },
            setupRequest: (req) => ({ ...req, body: next() }),
          },
        ],
      },
      (err: Error | null, result: autocannon.Result) => {
        bar.update(opts.duration);
        bar.stop();
        stopCurrent = null;
        if (err) reject(err);
        else resolve(result);
      },
    );
    stopCurrent = () => instance.stop();
    instance.on('tick', () => bar.update(Math.min(opts.duration, ++ticks)));
  });
}

export interface IngestRun {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  /**
   * CPU milliseconds per request in the API process, and in the Postgres backends of the
   * bench database (other databases' load on the same server is not counted).
   */
  cpuMsServer: number;
  cpuMsPostgres: number;
}

/** CPU seconds so far of every backend connected to the bench database. */
async function backendsCpu(knex: Knex): Promise<Map<number, number>> {
  const r = (await knex.raw(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
  )) as { rows: { pid: number }[] };
  return cpuSecondsOf(r.rows.map((x) => x.pid));
}

/** CPU the backends spent between two snapshots (a backend born in between: all of it). */
function spent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, cpu] of after) total += cpu - (before.get(pid) ?? 0);
  return total;
}

/**
 * Rotating rounds of metered and baseline runs (each after a 2 s warmup) against `target`;
 * fails on any non-2xx. Returns the runs and how many metered requests were accepted.
 */
export async function measureIngest(
  label: string,
  base: string,
  ingestToken: string,
  target: IngestTarget,
  knex: Knex,
  opts: { connections: number; duration: number; rounds: number; apiPid: number | undefined },
): Promise<{ runs: Record<IngestMode, IngestRun[]>; meteredAccepted: number }> {
  const runs: Record<IngestMode, IngestRun[]> = { metered: [], baseline: [] };
  const makers = {
    metered: messageMaker(target, 'metered'),
    baseline: messageMaker(target, 'baseline'),
  };
  let meteredAccepted = 0;
  for (let round = 1; round <= opts.rounds; round++) {
    const order: IngestMode[] = round % 2 ? ['metered', 'baseline'] : ['baseline', 'metered'];
    for (const mode of order) {
      const run = { connections: opts.connections, duration: opts.duration };
      const title = `${label}, ${mode} #${round}`;
      const warm = await ingestRun(`${title} warmup`, base, ingestToken, makers[mode], {
        ...run,
        duration: 2,
      });
      const before = { api: cpuSnapshot(opts.apiPid), pg: await backendsCpu(knex) };
      const r = await ingestRun(title, base, ingestToken, makers[mode], run);
      const after = { api: cpuSnapshot(opts.apiPid), pg: await backendsCpu(knex) };
      const perRequest = (seconds: number) => (seconds * 1000) / Math.max(1, r.requests.total);
      for (const x of [warm, r]) {
        if (x.non2xx || x.errors || x.timeouts) {
          throw new Error(
            `${title}: ${x.non2xx} non-2xx (${JSON.stringify(x.statusCodeStats)}), ${x.errors} errors, ${x.timeouts} timeouts`,
          );
        }
        if (mode === 'metered') meteredAccepted += x['2xx'];
      }
      runs[mode].push({
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        ok: r['2xx'],
        cpuMsServer: perRequest(
          (after.api?.group ?? Number.NaN) - (before.api?.group ?? Number.NaN),
        ),
        cpuMsPostgres: perRequest(spent(before.pg, after.pg)),
      });
    }
  }
  return { runs, meteredAccepted };
}

/**
 * Every completed call of the target's tenants counted exactly once: the counters equal the
 * calls' own markers (requests cut off at the end of a run may still have completed; they
 * are on both sides). Returns the number of counted calls.
 */
export async function checkCounted(knex: Knex, target: IngestTarget, accepted: number) {
  const ids = target.map((t) => t.tenantId);
  const [calls] = (await knex('calls')
    .whereIn('tenant_id', ids)
    .andWhere({ status: 'completed' })
    .count({ n: '*' })
    .sum({ m: 'counted_minutes' })) as [{ n: string; m: string }];
  const [counters] = (await knex('usage_periods')
    .whereIn('tenant_id', ids)
    .sum({ n: 'calls_completed', m: 'minutes_used' })) as [{ n: string; m: string }];
  if (Number(calls.n) !== Number(counters.n) || Number(calls.m) !== Number(counters.m)) {
    throw new Error(`counters disagree with the calls: ${JSON.stringify({ calls, counters })}`);
  }
  if (Number(calls.n) < accepted) throw new Error(`${calls.n} counted < ${accepted} accepted`);
  return { calls: Number(calls.n), minutes: Number(calls.m) };
}
