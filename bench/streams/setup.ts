import { Agent, request } from 'node:http';
import {
  ApiKeysStore,
  createKnex,
  migrateLatest,
  ReceptionistsStore,
  TenantsStore,
} from '@switchboard/db';
import { dropAndCreateDatabase, localDatabase, withClient } from '../lib/database';
import { progressBar, sleep } from '../lib/progress';

export interface StreamTenant {
  tenantId: string;
  receptionistId: string;
  phone: string;
  /** Read keys, each for at most `perKey` streams. */
  keys: string[];
}

/** The bench database (local Postgres only), dropped at the end of every run. */
export function benchDatabase(): { adminUrl: string; benchUrl: string; dbName: string } {
  const dbName = process.env.BENCH_STREAMS_DATABASE_NAME ?? 'switchboard_bench_streams';
  const { adminUrl, url } = localDatabase(dbName, 'BENCH_STREAMS_DATABASE_NAME');
  return { adminUrl, benchUrl: url, dbName };
}

export async function dropDatabase(): Promise<void> {
  const { adminUrl, dbName } = benchDatabase();
  await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
}

/**
 * A fresh, migrated bench database with `tenants` tenants, each with a ready receptionist
 * and `keysEach` read keys (the per-key stream limit stays at its default: more keys, not a
 * higher limit, give a tenant its streams).
 */
export async function setupDatabase(tenants: number, keysEach: number): Promise<StreamTenant[]> {
  const { adminUrl, benchUrl, dbName } = benchDatabase();
  await dropAndCreateDatabase(adminUrl, dbName);
  const knex = createKnex(benchUrl, { poolMax: 2 });
  try {
    await migrateLatest(knex);
    const out: StreamTenant[] = [];
    for (let t = 0; t < tenants; t++) {
      const tenant = await new TenantsStore(knex).create({ name: `Streams bench ${t + 1}` });
      const phone = `+1415555${String(t).padStart(4, '0')}`;
      const receptionist = await new ReceptionistsStore(knex).create({
        tenantId: tenant.id,
        name: 'Front Desk',
        status: 'ready',
        phoneNumber: phone,
        provisionedAt: new Date(),
      });
      const keys: string[] = [];
      for (let k = 0; k < keysEach; k++) {
        const { key } = await new ApiKeysStore(knex).create({
          tenantId: tenant.id,
          scopes: ['read'],
          name: `streams bench ${k + 1}`,
        });
        keys.push(key);
      }
      out.push({ tenantId: tenant.id, receptionistId: receptionist.id, phone, keys });
    }
    return out;
  } finally {
    await knex.destroy();
  }
}

/** One ingested message: when it was sent and when its 202 (the commit) came back. */
export interface Sent {
  tenant: number;
  sentAt: number;
  ackAt: number | null;
  status: number | null;
  /** Why it got no answer (a timeout, a reset), when it got none. */
  error?: string;
}

/** The `from` of the k-th message of a phase: how a receipt names its event. */
export const tagOf = (phase: number, k: number): string =>
  `+19${phase}${String(k).padStart(9, '0')}`;

const now = (): number => performance.timeOrigin + performance.now();

let stopRequested = false;
/** Stops a running ingestion loop (Ctrl-C). */
export const stopIngest = (): void => {
  stopRequested = true;
};

/**
 * Ingests `rate` × `seconds` `call.started` messages, as the voice platform reports calls
 * (POST /internal/v1/telephony/events with INGEST_TOKEN), on a fixed schedule (the k-th at
 * k / rate s, whatever the answers: an open loop), the k-th for tenant `tenantOf(k)`; each
 * emits one `call.started` event whose `from` is the message's tag. `sent` gets each
 * message's send time (just before its request is written) and its acknowledgement.
 */
export async function ingest(
  label: string,
  opts: {
    base: string;
    ingestToken: string;
    phase: number;
    rate: number;
    seconds: number;
    tenants: readonly StreamTenant[];
    tenantOf: (k: number) => number;
    sent: Map<string, Sent>;
  },
): Promise<{ failed: number }> {
  const total = opts.rate * opts.seconds;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const bar = progressBar(label.padEnd(28), total, 'events');
  const run = Math.random().toString(36).slice(2, 8);
  const answers: Promise<void>[] = [];
  let failed = 0;
  const t0 = now();
  for (let k = 0; k < total && !stopRequested; k++) {
    const due = t0 + (k * 1000) / opts.rate;
    const wait = due - now();
    if (wait > 0) await sleep(wait);
    const t = opts.tenantOf(k);
    const tenant = opts.tenants[t] as StreamTenant;
    const tag = tagOf(opts.phase, k);
    const body = JSON.stringify({
      id: `msg_bench_${run}_${opts.phase}_${k}`,
      type: 'call.started',
      receptionist_id: tenant.receptionistId,
      provider_call_id: `bench_${run}_${opts.phase}_${k}`,
      direction: 'inbound',
      from: tag,
      to: tenant.phone,
      occurred_at: new Date().toISOString(),
    });
    const entry: Sent = { tenant: t, sentAt: now(), ackAt: null, status: null };
    opts.sent.set(tag, entry);
    answers.push(
      new Promise<void>((done) => {
        const req = request(
          `${opts.base}/internal/v1/telephony/events`,
          {
            method: 'POST',
            agent,
            headers: {
              authorization: `Bearer ${opts.ingestToken}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
            timeout: 30_000,
          },
          (res) => {
            res.resume();
            res.on('end', () => {
              entry.ackAt = now();
              entry.status = res.statusCode ?? 0;
              if (entry.status !== 202) failed += 1;
              bar.increment();
              done();
            });
          },
        );
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.on('error', (err) => {
          entry.error = err.message;
          failed += 1;
          bar.increment();
          done();
        });
        req.end(body);
      }),
    );
  }
  await Promise.all(answers);
  bar.stop();
  agent.destroy();
  return { failed };
}
