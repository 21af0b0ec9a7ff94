/**
 * The bare references of `npm run bench:compare`: a bare Express 5 app (no middleware, same
 * knex pool and Redis connection settings as the API) doing the I/O of an API request and
 * nothing else. Run as its own process by bench/compare.ts.
 *
 * - GET /page: the key lookup (the API's own, ApiKeysStore.findActiveByHash: its statement,
 *   by the key's SHA-256, shared by the requests waiting at the same moment, no cache), the
 *   first page of 20 calls with CallsStore.list, and the API's item rendering.
 * - POST /outbound: the JSON body, the key lookup, the idempotency marker (SET NX PX), the
 *   API's one INSERT … SELECT of the call, the dial job (the same BullMQ add) and the stored
 *   response (SET PX): what POST /calls/outbound with a new Idempotency-Key does in Redis
 *   and Postgres.
 *
 * Env: DATABASE_URL, REDIS_URL, PORT, BENCH_REDIS_PREFIX.
 */
import express, { type Request, type Response } from 'express';
import { ApiKeysStore, CallLifecycle, CallsStore, createKnex, hashApiKey } from '@switchboard/db';
import { closeQueues, createQueues, createRedis, enqueueFromRequest } from '@switchboard/queues';
import { renderCallListItem } from '../../apps/api/src/shared/call-render';
import { runBareServer, serveUntilSignal } from '../lib/bare-server';

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  const port = Number(process.env.PORT);
  const prefix = process.env.BENCH_REDIS_PREFIX;
  if (!databaseUrl || !prefix || !Number.isInteger(port) || port <= 0) {
    throw new Error('compare bare-server needs DATABASE_URL, PORT and BENCH_REDIS_PREFIX');
  }
  const knex = createKnex(databaseUrl);
  const calls = new CallsStore(knex, new CallLifecycle());
  const keys = new ApiKeysStore(knex);
  const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'producer');
  if (redis.status !== 'ready') await new Promise((ready) => redis.once('ready', ready));
  const queues = createQueues(redis, prefix);

  const tenantOf = async (req: Request, res: Response): Promise<string | null> => {
    const key = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1];
    const found = key ? await keys.findActiveByHash(hashApiKey(key)) : undefined;
    if (!found) res.status(401).json({ error: 'unknown key' });
    return found?.tenantId ?? null;
  };

  const app = express();
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/page', async (req, res) => {
    const tenantId = await tenantOf(req, res);
    if (!tenantId) return;
    const page = await calls.list(tenantId, {}, { limit: 20 });
    res.json({ calls: page.rows.map(renderCallListItem), next_cursor: null });
  });
  app.post('/outbound', express.json(), async (req, res) => {
    const tenantId = await tenantOf(req, res);
    if (!tenantId) return;
    const body = req.body as { receptionist_id: string; to: string; customer_name?: string };
    const idem = req.get('idempotency-key') ?? '';
    const redisKey = `${prefix}:bare:idem:${tenantId}:${idem}`;
    await redis.set(redisKey, '{"state":"in_progress"}', 'PX', 60_000, 'NX');
    const created = await calls.createOutbound({
      tenantId,
      receptionistId: body.receptionist_id,
      to: body.to,
      customerName: body.customer_name ?? null,
      purpose: null,
      metadata: {},
      idempotency: { key: idem, fingerprint: 'bare' },
      at: new Date(),
    });
    if (!created) {
      res.status(404).json({ error: 'no such receptionist' });
      return;
    }
    await enqueueFromRequest(queues, redis, 'outboundCalls', {
      data: { v: 1, callId: created.call.id },
    });
    const answer = { id: created.call.id, status: 'queued' };
    await redis.set(redisKey, JSON.stringify({ state: 'done', body: answer }), 'PX', 60_000);
    res.status(202).json(answer);
  });
  serveUntilSignal(app, port, () =>
    Promise.allSettled([knex.destroy(), closeQueues(queues, redis)]),
  );
}

runBareServer(main);
