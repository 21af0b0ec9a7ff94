/**
 * The baseline of the calls benchmark: a bare Express 5 app (no middleware; same database and
 * knex pool settings as the API), run as its own process by bench/calls.ts.
 *
 * - GET /calls/random: the baseline, one SELECT by primary key of a random call.
 * - GET /calls/page: informational, the API's list work without the API around it: the same
 *   CallsStore.list (first page of 20, BENCH_TENANT_ID) and the same item rendering, but no
 *   authentication, logging, validation or cursor signing.
 *
 * Env: DATABASE_URL, PORT, BENCH_TENANT_ID.
 */
import express from 'express';
import { CallLifecycle, CallsStore, createKnex } from '@switchboard/db';
import { renderCallListItem } from '../apps/api/src/shared/call-render';
import { runBareServer, serveUntilSignal } from './lib/bare-server';

const SAMPLE_IDS = 10_000;

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  const port = Number(process.env.PORT);
  const tenantId = process.env.BENCH_TENANT_ID;
  if (!databaseUrl || !tenantId || !Number.isInteger(port) || port <= 0) {
    throw new Error('bare-server needs DATABASE_URL, PORT and BENCH_TENANT_ID');
  }
  const knex = createKnex(databaseUrl);
  const calls = new CallsStore(knex, new CallLifecycle());
  // A random sample of ids spread over the whole table, loaded once.
  const rows = (await knex.raw('SELECT id FROM calls TABLESAMPLE SYSTEM (1) LIMIT ?', [
    SAMPLE_IDS,
  ])) as { rows: { id: string }[] };
  const ids = rows.rows.map((r) => r.id);
  if (ids.length === 0) throw new Error('the calls table is empty');

  const app = express();
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', ids: ids.length });
  });
  app.get('/calls/random', async (_req, res) => {
    const id = ids[Math.floor(Math.random() * ids.length)] as string;
    const call: unknown = await knex('calls').where({ id }).first();
    res.json(call);
  });
  app.get('/calls/page', async (_req, res) => {
    const page = await calls.list(tenantId, {}, { limit: 20 });
    res.json({ calls: page.rows.map(renderCallListItem), next_cursor: null });
  });
  serveUntilSignal(app, port, () => knex.destroy());
}

runBareServer(main);
