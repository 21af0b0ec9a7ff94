/**
 * The bare references of `npm run bench:compare` (issue 43): Express 5 on the same Node, a
 * `pg.Pool({max: 10})`, one ioredis connection and one BullMQ queue, doing the essential I/O
 * of an API request and nothing else: no validation library, no logging, no metrics, no
 * knex, none of the API's middleware. Run as its own process by bench/compare.ts.
 *
 * - GET /page: sha256 of the bearer key, the key's row by that hash (`revoked_at IS NULL`),
 *   the tenant's newest 21 calls joined to their receptionist (the columns the API's list
 *   reads), and the API's JSON: 20 items and the signed next cursor (CURSOR_SECRET is the
 *   API's, so both answers are byte for byte the same; bench/compare.ts checks it).
 * - POST /outbound: the same key lookup, one `SET NX PX` of the Idempotency-Key, one INSERT
 *   of the call row (the API's INSERT … SELECT from the receptionist, which takes its
 *   number), one BullMQ `add` of the dial job (the catalog's name, id and options), one
 *   `SET PX` of the stored response, and the 202 JSON with its Location.
 *
 * Env: DATABASE_URL, REDIS_URL, PORT, BENCH_REDIS_PREFIX, CURSOR_SECRET.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import express, { type Request, type Response } from 'express';
import IORedis from 'ioredis';
import pg from 'pg';
import { catalog, DEFAULT_JOB_OPTIONS } from '@switchboard/queues';
import { runBareServer, serveUntilSignal } from '../lib/bare-server';

const KEY_SQL = `SELECT id, tenant_id, scopes, livemode FROM api_keys
  WHERE key_hash = $1 AND revoked_at IS NULL`;

const PAGE_SQL = `SELECT c.id, c.direction, c.status, c.from_number, c.to_number, c.customer_name,
    c.duration_seconds, c.outcome, c.started_at, c.ended_at, c.booking, c.receptionist_id,
    c.livemode, r.name AS receptionist_name, (c.transcript IS NOT NULL) AS has_transcript,
    (c.recording IS NOT NULL) AS has_recording
  FROM calls c JOIN receptionists r ON r.id = c.receptionist_id
  WHERE c.tenant_id = $1 AND c.livemode = $2 ORDER BY c.started_at DESC, c.id DESC LIMIT 21`;

const INSERT_SQL = `INSERT INTO calls (id, tenant_id, receptionist_id, direction, status,
    from_number, to_number, customer_name, purpose, metadata, started_at, created_at,
    idempotency_key, idempotency_fingerprint, livemode)
  SELECT $1, r.tenant_id, r.id, 'outbound', 'queued', r.phone_number, $2, $3, NULL, '{}', $4, $4,
    $5, $6, $9
  FROM receptionists r
  WHERE r.id = $7 AND r.tenant_id = $8 AND r.status = 'ready' AND r.phone_number IS NOT NULL
  ON CONFLICT DO NOTHING
  RETURNING id, receptionist_id, from_number, to_number, created_at`;

interface PageRow {
  id: string;
  direction: string;
  status: string;
  from_number: string;
  to_number: string;
  customer_name: string | null;
  duration_seconds: number | null;
  outcome: string | null;
  started_at: Date;
  ended_at: Date | null;
  booking: (Record<string, unknown> & { address?: unknown }) | null;
  receptionist_id: string;
  receptionist_name: string;
  livemode: boolean;
  has_transcript: boolean;
  has_recording: boolean;
}

/** The API's list item (apps/api/src/shared/call-render.ts), written out here. */
const renderItem = (c: PageRow) => {
  let booking = null;
  if (c.booking) {
    const { address: _address, ...listed } = c.booking;
    booking = listed;
  }
  return {
    id: c.id,
    direction: c.direction,
    status: c.status,
    from: c.from_number,
    to: c.to_number,
    customer_name: c.customer_name,
    duration_seconds: c.duration_seconds,
    outcome: c.outcome,
    started_at: c.started_at.toISOString(),
    ended_at: c.ended_at?.toISOString() ?? null,
    has_transcript: c.has_transcript,
    has_recording: c.has_recording,
    receptionist_id: c.receptionist_id,
    receptionist_name: c.receptionist_name,
    booking,
    livemode: c.livemode,
  };
};

/** The API's cursor format: base64url(position).base64url(HMAC-SHA256, first 16 bytes). */
function cursorOf(secret: string, tenantId: string, last: PageRow): string {
  const payload = Buffer.from(JSON.stringify([last.started_at.getTime(), last.id])).toString(
    'base64url',
  );
  const mac = createHmac('sha256', secret)
    .update(`calls\n${tenantId}\n${payload}`)
    .digest()
    .subarray(0, 16);
  return `${payload}.${mac.toString('base64url')}`;
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  const port = Number(process.env.PORT);
  const prefix = process.env.BENCH_REDIS_PREFIX;
  const cursorSecret = process.env.CURSOR_SECRET;
  if (!databaseUrl || !prefix || !cursorSecret || !Number.isInteger(port) || port <= 0) {
    throw new Error(
      'compare bare-server needs DATABASE_URL, PORT, BENCH_REDIS_PREFIX, CURSOR_SECRET',
    );
  }
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const redis = new IORedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    maxRetriesPerRequest: 1,
  });
  const dial = catalog.outboundCalls;
  const queue = new Queue(dial.queue, {
    connection: redis,
    prefix,
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
  });

  /** The key's tenant and mode (a test-mode key sees and makes test-mode calls only). */
  const keyOf = async (
    req: Request,
    res: Response,
  ): Promise<{ tenantId: string; livemode: boolean } | null> => {
    const key = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const hash = key ? createHash('sha256').update(key).digest('hex') : null;
    const row = hash
      ? (await pool.query<{ id: string; tenant_id: string; livemode: boolean }>(KEY_SQL, [hash]))
          .rows[0]
      : undefined;
    if (!row) res.status(401).json({ error: 'unknown key' });
    return row ? { tenantId: row.tenant_id, livemode: row.livemode } : null;
  };

  const app = express();
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/page', async (req, res) => {
    const key = await keyOf(req, res);
    if (!key) return;
    const { tenantId } = key;
    const { rows } = await pool.query<PageRow>(PAGE_SQL, [tenantId, key.livemode]);
    const more = rows.length > 20;
    if (more) rows.length = 20;
    const last = rows[rows.length - 1];
    res.json({
      calls: rows.map(renderItem),
      next_cursor: more && last ? cursorOf(cursorSecret, tenantId, last) : null,
      scope: 'all_receptionists',
    });
  });
  app.post('/outbound', express.json(), async (req, res) => {
    const key = await keyOf(req, res);
    if (!key) return;
    const { tenantId } = key;
    const body = req.body as { receptionist_id: string; to: string; customer_name?: string };
    const idem = req.headers['idempotency-key'] as string;
    const redisKey = `${prefix}:bare:idem:${tenantId}:${idem}`;
    await redis.set(redisKey, '{"state":"in_progress"}', 'PX', 10_000, 'NX');
    const at = new Date();
    const id = `call_${randomUUID().replace(/-/g, '')}`;
    const { rows } = await pool.query<{
      id: string;
      receptionist_id: string;
      from_number: string;
      to_number: string;
      created_at: Date;
    }>(INSERT_SQL, [
      id,
      body.to,
      body.customer_name ?? null,
      at,
      idem,
      'bare',
      body.receptionist_id,
      tenantId,
      key.livemode,
    ]);
    const call = rows[0];
    if (!call) {
      res.status(404).json({ error: 'no such receptionist' });
      return;
    }
    const job = dial.spec({ v: 1, callId: call.id });
    await queue.add(job.name, job.data, job.opts);
    const answer = {
      id: call.id,
      status: 'queued',
      direction: 'outbound',
      receptionist_id: call.receptionist_id,
      from: call.from_number,
      to: call.to_number,
      customer_name: body.customer_name ?? null,
      created_at: call.created_at.toISOString(),
      livemode: key.livemode,
    };
    const location = `/api/v1/calls/${call.id}`;
    await redis.set(
      redisKey,
      JSON.stringify({ state: 'done', status: 202, body: answer, location }),
      'PX',
      86_400_000,
    );
    res.status(202).location(location).json(answer);
  });
  serveUntilSignal(app, port, () =>
    Promise.allSettled([pool.end(), queue.close().then(() => redis.quit())]),
  );
}

runBareServer(main);
