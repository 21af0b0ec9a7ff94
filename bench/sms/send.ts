import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import {
  ApiKeysStore,
  createKnex,
  migrateLatest,
  ReceptionistsStore,
  TenantsStore,
} from '@switchboard/db';
import type { Queues } from '@switchboard/queues';
import { startTsChild, waitForHttp } from '../lib/children';
import { freePort } from '../lib/http';
import { cpuSnapshot } from '../lib/proc';
import { progressBar, step } from '../lib/progress';
import { median } from '../lib/stats';
import { recreateDatabase, smsDatabaseUrls } from './seed';
import { UNLIMITED_API_RATE } from '../lib/env';

export type Route = 'sms' | 'call';
export interface SendRun {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** CPU milliseconds per request in the API process and in all of Postgres. */
  cpuMsServer: number;
  cpuMsPostgres: number;
}
export interface SendResult {
  runs: Record<Route, SendRun[]>;
  /** Median SMS req/s over median outbound-call req/s. */
  ratio: number;
  /** The median of each round's SMS / outbound ratio (the two runs of a round are adjacent). */
  pairedRatio: number;
  checked: { messages: number; smsJobs: number; calls: number; dialJobs: number };
}

const PATHS: Record<Route, string> = { sms: '/api/v1/sms/send', call: '/api/v1/calls/outbound' };

let stop: (() => void) | null = null;
/** Stops a running autocannon (Ctrl-C). */
export const stopSendLoad = () => stop?.();

function cannon(
  title: string,
  target: { base: string; path: string },
  headers: Record<string, string>,
  body: string,
  nextKey: () => string,
  duration: number,
  connections: number,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const bar = progressBar(title.padEnd(36), duration, 's');
    let ticks = 0;
    const instance = autocannon(
      {
        url: target.base,
        connections,
        duration,
        requests: [
          {
            method: 'POST',
            path: target.path,
            headers,
            body,
            setupRequest: (req) => ({
              ...req,
              headers: { ...req.headers, 'idempotency-key': nextKey() },
            }),
          },
        ],
      },
      (err: Error | null, result: autocannon.Result) => {
        bar.update(duration);
        bar.stop();
        stop = null;
        if (err) reject(err);
        else resolve(result);
      },
    );
    stop = () => instance.stop();
    instance.on('tick', () => bar.update(Math.min(duration, ++ticks)));
  });
}

/**
 * POST /sms/send and POST /calls/outbound with a unique Idempotency-Key per request, against
 * one API process on a fresh database, in rotating rounds (medians). Both routes run the same
 * machinery (respondIdempotently, one INSERT … SELECT with the backstop, one job add); no
 * worker runs, so jobs only pile up in Redis.
 */
export async function measureSend(opts: {
  database: string;
  redisUrl: string;
  prefix: string;
  queues: Queues;
  rounds: number;
  durationS: number;
  warmupS: number;
  connections: number;
}): Promise<SendResult> {
  const { adminUrl, benchUrl } = smsDatabaseUrls(opts.database);
  const setup = await step(`recreating ${opts.database}`, async () => {
    await recreateDatabase(adminUrl, opts.database, true);
    const knex = createKnex(benchUrl, { poolMax: 2 });
    try {
      await migrateLatest(knex);
      const tenant = await new TenantsStore(knex).create({ name: 'SMS Send Bench' });
      const { key } = await new ApiKeysStore(knex).create({
        tenantId: tenant.id,
        scopes: ['write'],
        name: 'sms send benchmark',
      });
      const r = await new ReceptionistsStore(knex).create({
        tenantId: tenant.id,
        name: 'Front Desk',
        status: 'ready',
        phoneNumber: '+14155550100',
        provisionedAt: new Date(),
      });
      return { key, receptionistId: r.id };
    } finally {
      await knex.destroy();
    }
  });
  const port = await freePort();
  const api = startTsChild('api (send)', 'apps/api/src/server.ts', {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: benchUrl,
    REDIS_URL: opts.redisUrl,
    QUEUE_PREFIX: opts.prefix,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    INGEST_TOKEN: randomBytes(24).toString('hex'),
    CURSOR_SECRET: randomBytes(24).toString('hex'),
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...UNLIMITED_API_RATE,
  });
  const base = `http://127.0.0.1:${port}`;
  await step('starting the API', () => waitForHttp(api, `${base}/healthz`));
  const headers = { authorization: `Bearer ${setup.key}`, 'content-type': 'application/json' };
  const bodies: Record<Route, string> = {
    sms: JSON.stringify({
      receptionist_id: setup.receptionistId,
      to: '+14155550123',
      message:
        'Hi Dana, your boiler service is booked for Tuesday at 09:30. Reply STOP to opt out.',
      metadata: { source: 'benchmark' },
    }),
    call: JSON.stringify({
      receptionist_id: setup.receptionistId,
      to: '+14155550123',
      customer_name: 'Bench Customer',
      metadata: { source: 'benchmark' },
    }),
  };
  const run = randomBytes(4).toString('hex');
  let counter = 0;
  const nextKey = () => `k-${run}-${counter++}`;
  const runs: Record<Route, SendRun[]> = { sms: [], call: [] };
  const order: Route[] = ['sms', 'call'];
  // A fresh process is slow at first (JIT, pool connections, plans): warm both routes before
  // any measured round, so that the route measured first is not the one that pays for it.
  for (const route of order) {
    await cannon(
      `${route}: process warmup`,
      { base, path: PATHS[route] },
      headers,
      bodies[route],
      nextKey,
      opts.warmupS * 2,
      opts.connections,
    );
  }
  for (let round = 1; round <= opts.rounds; round++) {
    for (let k = 0; k < order.length; k++) {
      const route = order[(round - 1 + k) % order.length] as Route;
      const target = { base, path: PATHS[route] };
      const go = (title: string, s: number) =>
        cannon(title, target, headers, bodies[route], nextKey, s, opts.connections);
      const warm = await go(`${route} #${round}: warmup`, opts.warmupS);
      const before = cpuSnapshot(api.proc.pid);
      const r = await go(`${route} #${round}`, opts.durationS);
      const after = cpuSnapshot(api.proc.pid);
      for (const res of [warm, r]) {
        if (res.non2xx > 0 || res.errors > 0 || res.timeouts > 0) {
          throw new Error(
            `${route}: ${res.non2xx} non-2xx, ${res.errors} errors, ${res.timeouts} timeouts`,
          );
        }
      }
      const perRequest = (a = Number.NaN, b = Number.NaN) =>
        ((b - a) * 1000) / Math.max(1, r.requests.total);
      runs[route].push({
        requestsPerSecond: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        cpuMsServer: perRequest(before?.group, after?.group),
        cpuMsPostgres: perRequest(before?.postgres, after?.postgres),
      });
    }
  }
  await api.stop();
  // Every accepted request made exactly one row and one job.
  const knex = createKnex(benchUrl, { poolMax: 1 });
  try {
    const count = async (table: string) =>
      Number(((await knex(table).count({ n: '*' })) as [{ n: string }])[0].n);
    const checked = {
      messages: await count('sms_messages'),
      smsJobs: await opts.queues.sms.getJobCountByTypes('waiting', 'delayed', 'prioritized'),
      calls: await count('calls'),
      dialJobs: await opts.queues.outboundCalls.getJobCountByTypes(
        'waiting',
        'delayed',
        'prioritized',
      ),
    };
    // A job the API could not add within its 1 s bound (a loaded Redis) is left to the
    // reconciler by design, so a few rows may lack one; a job without a row is a bug.
    if (checked.smsJobs > checked.messages || checked.dialJobs > checked.calls) {
      throw new Error(`more jobs than rows: ${JSON.stringify(checked)}`);
    }
    const rps = (r: Route) => median(runs[r].map((x) => x.requestsPerSecond));
    const paired = median(
      runs.sms.map((r, i) => r.requestsPerSecond / (runs.call[i]?.requestsPerSecond ?? Number.NaN)),
    );
    return { runs, ratio: rps('sms') / rps('call'), pairedRatio: paired, checked };
  } finally {
    await knex.destroy();
  }
}
