import { randomBytes } from 'node:crypto';
import type { Knex } from '@switchboard/db';
import { emit } from '@switchboard/events';
import { startNodeChild } from '../delivery/children';
import type { ReceiverClient } from '../delivery/receiver-client';
import { createTenant } from '../delivery/setup';
import { freePort, httpGet } from '../lib/http';
import { log, progressBar, sleep } from '../lib/progress';
import { summarize, type LatencySummary } from '../lib/stats';
import { serviceEntry } from '../lib/compiled';

export interface WorkerRun {
  deliveries: number;
  seconds: number;
  perSecond: number;
  /** Outbox relay lag (commit → published) at a steady 50 events/s while the worker runs. */
  relayLagMs: LatencySummary;
}

const event = (tenantId: string, receptionistId: string, i: number) => ({
  tenantId,
  receptionistId,
  type: 'call.started' as const,
  data: {
    call_id: `call_b${i}`,
    direction: 'inbound' as const,
    from: '+14155550100',
    to: '+14155550199',
    started_at: new Date().toISOString(),
  },
});

/**
 * Deliveries per second of ONE worker process against `knex`'s database: `events` events to
 * one subscription are committed first, then the worker starts and the rate is deliveries /
 * (last − first receipt). Then, with the worker still running, 500 events at 50/s measure
 * the relay lag.
 */
export async function workerRun(
  knex: Knex,
  receiver: ReceiverClient,
  env: NodeJS.ProcessEnv,
  encryptionKey: Buffer,
  label: string,
  events: number,
): Promise<WorkerRun> {
  const url = (i: number) => `https://127.0.0.1:${receiver.port}/p/${label}/${i}`;
  const tenant = await createTenant(knex, encryptionKey, `bench-${label}`, 1, url);
  const bar = progressBar(`(${label}) emitting`.padEnd(28), events, 'events');
  for (let done = 0; done < events;) {
    const n = Math.min(500, events - done);
    await knex.transaction(async (trx) => {
      for (let i = 0; i < n; i++) {
        await emit(trx, event(tenant.tenantId, tenant.receptionistId, done + i));
      }
    });
    done += n;
    bar.update(done);
  }
  bar.stop();
  const metricsPort = await freePort();
  const worker = startNodeChild(`worker ${label}`, serviceEntry('apps/worker/dist/main.js'), {
    env: {
      ...env,
      METRICS_PORT: String(metricsPort),
      QUEUE_PREFIX: `{sbsc-${randomBytes(4).toString('hex')}}`,
    },
  });
  try {
    for (let i = 0; i < 600; i++) {
      const ok = await httpGet(`http://127.0.0.1:${metricsPort}/metrics`, {}, 2000)
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) break;
      await sleep(100);
    }
    const got = progressBar(`(${label}) delivered`.padEnd(28), events, 'deliveries');
    const s = await receiver.waitFor(label, (st) => st.distinct >= events, {
      timeoutMs: 1_800_000,
      pollMs: 1000,
      tick: (st) => got.update(Math.min(events, st.distinct)),
    });
    got.stop();
    const seconds = (s.last - s.first) / 1000;
    log(`  ${label}: ${s.distinct} deliveries in ${seconds.toFixed(1)} s`);

    // Relay lag at a steady rate.
    const lagTenant = await createTenant(
      knex,
      encryptionKey,
      `lag-${label}`,
      1,
      (i) => `https://127.0.0.1:${receiver.port}/p/${label}-lag/${i}`,
    );
    for (let i = 0; i < 500; i++) {
      await knex.transaction((trx) =>
        emit(trx, event(lagTenant.tenantId, lagTenant.receptionistId, i)),
      );
      await sleep(20);
    }
    await receiver.waitFor(`${label}-lag`, (st) => st.distinct >= 500, { timeoutMs: 120_000 });
    const { rows } = (await knex.raw(
      `SELECT extract(epoch FROM min(d.created_at) - e.created_at) * 1000 AS ms
         FROM events e JOIN webhook_deliveries d ON d.event_id = e.id
        WHERE e.tenant_id = ? GROUP BY e.id, e.created_at`,
      [lagTenant.tenantId],
    )) as { rows: { ms: string }[] };
    return {
      deliveries: s.distinct,
      seconds: Number(seconds.toFixed(2)),
      perSecond: Number((s.distinct / Math.max(seconds, 1e-3)).toFixed(1)),
      relayLagMs: summarize(rows.map((r) => Number(r.ms))),
    };
  } finally {
    await worker.stop(20_000);
  }
}
