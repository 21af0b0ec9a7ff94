/**
 * The baseline of the outbound benchmark: a bare Express 5 app whose one route parses the
 * JSON body and does one Redis `SET key value NX PX` and one `GET key` (the least an
 * idempotent endpoint does), on the same fail-fast Redis connection settings as the API,
 * with none of the API's middleware. Run as its own process by bench/outbound.ts.
 *
 * Env: REDIS_URL, PORT, BENCH_REDIS_PREFIX. Routes: GET /healthz, POST /idem (header
 * Idempotency-Key).
 */
import express from 'express';
import { closeRedis, createRedis } from '@switchboard/queues';
import { runBareServer, serveUntilSignal } from '../lib/bare-server';

async function main(): Promise<void> {
  const port = Number(process.env.PORT);
  const prefix = process.env.BENCH_REDIS_PREFIX;
  if (!Number.isInteger(port) || port <= 0 || !prefix) {
    throw new Error('bare-server needs PORT and BENCH_REDIS_PREFIX');
  }
  const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'producer');
  if (redis.status !== 'ready') await new Promise((ready) => redis.once('ready', ready));

  const app = express();
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.post('/idem', express.json(), async (req, res) => {
    const key = `${prefix}:bare:${req.get('idempotency-key') ?? ''}`;
    const set = await redis.set(key, JSON.stringify(req.body), 'PX', 60_000, 'NX');
    const value = await redis.get(key);
    res.status(202).json({ claimed: set === 'OK', stored: value !== null });
  });
  serveUntilSignal(app, port, () => closeRedis(redis));
}

runBareServer(main);
