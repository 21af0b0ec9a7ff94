import {
  CallLifecycle,
  CallsStore,
  DeliveriesStore,
  dropBefore,
  PARTITIONED_TABLES,
  partitionRanges,
  type Knex,
  type KeysetPosition,
} from '@switchboard/db';
import { percentile, summarize, timeSequential, type LatencySummary } from '../lib/stats';
import { SUBSCRIPTION } from './seed';

/** One page (20) of the big tenant's `GET /calls` query, `depth` rows in (in process). */
export async function callsPage(
  knex: Knex,
  depth: number,
  samples: number,
): Promise<LatencySummary> {
  const { rows } = (await knex.raw(
    `SELECT started_at, id FROM calls WHERE tenant_id = 'ten_s0'
      ORDER BY started_at DESC, id DESC OFFSET ? LIMIT 1`,
    [Math.max(0, depth - 1)],
  )) as { rows: { started_at: Date; id: string }[] };
  const at = rows[0];
  const after: KeysetPosition | null =
    depth === 0 || !at ? null : { t: at.started_at.getTime(), id: at.id };
  const store = new CallsStore(knex, new CallLifecycle());
  return summarize(
    await timeSequential(samples, 10, async () => {
      await store.list('ten_s0', {}, { limit: 20, after });
    }),
  );
}

/** One page (20) of subscription 0's delivery log, newest first (in process). */
export async function deliveryLogPage(
  knex: Knex,
  samples: number,
): Promise<LatencySummary & { p95: number }> {
  const store = new DeliveriesStore(knex);
  const ms = await timeSequential(samples, 10, async () => {
    await store.listForSubscription(SUBSCRIPTION(0), { limit: 20 });
  });
  const p95 = percentile(
    [...ms].sort((a, b) => a - b),
    95,
  );
  return { ...summarize(ms), p95: Number(p95.toFixed(3)) };
}

/** Table and index bytes of each partitioned table (its partitions summed). */
export async function sizes(knex: Knex): Promise<Record<string, { table: number; index: number }>> {
  const out: Record<string, { table: number; index: number }> = {};
  for (const t of PARTITIONED_TABLES) {
    const { rows } = (await knex.raw(
      `SELECT coalesce(sum(pg_table_size(i.inhrelid)), 0)::bigint AS t,
              coalesce(sum(pg_indexes_size(i.inhrelid)), 0)::bigint AS x
         FROM pg_inherits i WHERE i.inhparent = ?::regclass`,
      [t.table],
    )) as { rows: { t: string; x: string }[] };
    out[t.table] = { table: Number(rows[0]?.t ?? 0), index: Number(rows[0]?.x ?? 0) };
  }
  return out;
}

/**
 * Drops the oldest day of deliveries (with that day's attempts and events) while a writer
 * inserts into today's partition every 5 ms; returns the drop's duration and the writer's
 * slowest insert during it.
 */
export async function dropOneDay(
  knex: Knex,
  writer: Knex,
): Promise<{ day: string; dropMs: number; writeMaxMs: number; writes: number }> {
  const deliveries = PARTITIONED_TABLES.find((t) => t.table === 'webhook_deliveries')!;
  const oldest = (await partitionRanges(knex, deliveries)).find((p) => p.start !== null);
  if (!oldest) throw new Error('no day partition to drop');
  let stop = false;
  const latencies: number[] = [];
  const writes = (async () => {
    for (let i = 0; !stop && i < 100_000; i++) {
      const t0 = performance.now();
      await writer.raw(
        `INSERT INTO webhook_delivery_attempts (delivery_id, round, attempt, duration_ms)
         VALUES (?, 1, 1, 1)`,
        [`dlv_w${i}`],
      );
      latencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  for (const t of PARTITIONED_TABLES.filter((p) => p.interval === 'day')) {
    await dropBefore(knex, t, oldest.end, 5_000);
  }
  const dropMs = performance.now() - t0;
  stop = true;
  await writes;
  return {
    day: oldest.start!.toISOString().slice(0, 10),
    dropMs: Number(dropMs.toFixed(1)),
    writeMaxMs: Number(Math.max(...latencies).toFixed(1)),
    writes: latencies.length,
  };
}
