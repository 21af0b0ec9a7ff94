import type { IncomingMessage } from 'node:http';
import type { Express } from 'express';
import type { Knex } from 'knex';
import request from 'supertest';
import type { LookupFn } from '@switchboard/webhooks';
import { fillPath, type Operation } from './operations';
import { PATH_ID_KINDS, type Kind, type TenantWorld } from './world';

/**
 * Body and query fields that name a resource: a sweep puts a real id of that kind there
 * (the contract: another tenant's id in a query filter or a body is a 404 too).
 */
export const FIELD_ID_KINDS: Readonly<Record<string, Kind>> = {
  receptionist_id: 'receptionist',
  lead_id: 'lead',
  call_id: 'call',
};

/** Every host resolves to loopback: sweeps make webhooks for any URL and never leave the machine. */
export const loopbackLookup: LookupFn = async () => [{ address: '127.0.0.1', family: 4 }];

/** One concrete request. */
export interface Req {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Sent as is (a JSON text, a CSV file, or anything a fuzzer made). */
  body?: string | Buffer;
  /** The operation answers an event stream: its first bytes are read, then it is closed. */
  stream?: boolean;
}

/** `example` with every id field naming `tenant`'s resource of that kind. */
export function withIds(example: unknown, tenant: TenantWorld): unknown {
  if (Array.isArray(example)) return example.map((v) => withIds(v, tenant));
  if (example === null || typeof example !== 'object') return example;
  return Object.fromEntries(
    Object.entries(example).map(([k, v]) => {
      const kind = FIELD_ID_KINDS[k];
      return [k, kind && typeof v === 'string' ? tenant.ids[kind] : withIds(v, tenant)];
    }),
  );
}

/**
 * The documented example request of `op`, valid as far as its schemas go: path ids of
 * `pathTenant`, body and query ids of `fieldTenant`, the key `auth`.
 */
export function exampleRequest(
  op: Operation,
  auth: string | null,
  pathTenant: TenantWorld,
  fieldTenant: TenantWorld = pathTenant,
  pathIds: Record<string, string> = {},
): Req {
  const kinds = PATH_ID_KINDS[op.operationId] ?? {};
  const values = Object.fromEntries(
    op.pathParams.map((p) => {
      const kind = kinds[p.name];
      return [p.name, pathIds[p.name] ?? (kind ? pathTenant.ids[kind] : 'unknown')];
    }),
  );
  const query = op.query
    .filter((q) => FIELD_ID_KINDS[q.name])
    .map((q) => `${q.name}=${encodeURIComponent(fieldTenant.ids[FIELD_ID_KINDS[q.name] as Kind])}`);
  const headers: Record<string, string> = {};
  if (auth) headers.Authorization = auth;
  // The MCP transport answers 406 unless both are acceptable.
  headers.Accept = 'application/json, text/event-stream';
  let body: string | undefined;
  if (op.body) {
    headers['Content-Type'] = op.body.contentType;
    body =
      op.body.contentType === 'application/json'
        ? JSON.stringify(withIds(op.body.example ?? {}, fieldTenant))
        : String(op.body.example ?? '');
  }
  const url = fillPath(op, values) + (query.length ? `?${query.join('&')}` : '');
  return { method: op.method, url, headers, body, stream: op.streams };
}

/**
 * Superagent's parser for an operation that may answer an event stream: an answer of
 * another type (an error) is read whole (JSON parsed into the body, as superagent does); an
 * event stream, which stays open, is read up to its first bytes (its `text`), then closed.
 */
function readAnswer(
  res: IncomingMessage & { text?: string },
  done: (err: Error | null, body: unknown) => void,
): void {
  const stream = /^text\/event-stream/.test(res.headers['content-type'] ?? '');
  const json = /^application\/json/.test(res.headers['content-type'] ?? '');
  let text = '';
  let settled = false;
  const finish = (err: Error | null, body: unknown) => {
    if (settled) return;
    settled = true;
    res.text = text;
    done(err, body);
  };
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    text += chunk;
    if (!stream) return;
    finish(null, {});
    res.destroy();
  });
  res.on('end', () => {
    let body: unknown = {};
    try {
      body = json && text ? JSON.parse(text) : {};
    } catch {
      body = {};
    }
    finish(null, body);
  });
  res.on('error', (err) => finish(err, {}));
}

/** Sends `req` to `app` (bounded: a hang is an error). */
export async function send(
  app: Express | import('node:http').Server,
  req: Req,
  timeoutMs = 15_000,
) {
  const client = request(app);
  const method = req.method as 'get' | 'post' | 'patch' | 'delete' | 'put';
  let r = client[method](req.url)
    .timeout(timeoutMs)
    .ok(() => true);
  for (const [name, value] of Object.entries(req.headers)) r = r.set(name, value);
  // Superagent's typings name the Node response its own Response; it is an IncomingMessage.
  if (req.stream) r = r.buffer(true).parse(readAnswer as unknown as Parameters<typeof r.parse>[0]);
  return req.body === undefined ? await r : await r.send(req.body);
}

/**
 * The statement that snapshots a database: one column per table (a partitioned table counts
 * once, through its parent; its partitions are not listed again). The schema does not change
 * during a sweep, so it is built once per connection pool.
 */
const snapshotSql = new WeakMap<Knex, Promise<string>>();

async function buildSnapshotSql(knex: Knex): Promise<string> {
  const { rows } = (await knex.raw(
    `SELECT c.relname AS name,
            EXISTS (SELECT 1 FROM pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
              AS tenant
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND c.relname NOT LIKE 'knex_migrations%'
        -- Leases of open event streams: a stream's is deleted after its client has gone.
        AND c.relname <> 'event_streams'
      ORDER BY c.relname`,
  )) as { rows: Array<{ name: string; tenant: boolean }> };
  const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
  // portal_sessions: a token in use records its last use (as a key does), asynchronously.
  const row = (name: string) =>
    name === 'portal_sessions' ? `CAST(to_jsonb(t) - 'last_used_at' AS text)` : 'CAST(t AS text)';
  const columns = rows.flatMap(({ name, tenant }) => [
    `CAST((SELECT count(*) FROM ${ident(name)}) AS text) AS ${ident(`${name} rows`)}`,
    // api_keys: the keys in use record their last use; nothing else of a key ever changes.
    ...(tenant && name !== 'api_keys'
      ? [
          `(SELECT md5(coalesce(string_agg(${row(name)}, '|' ORDER BY ${row(name)}), ''))
              FROM ${ident(name)} t WHERE tenant_id = :tenant) AS ${ident(`${name} of`)}`,
        ]
      : []),
  ]);
  return `SELECT ${columns.join(',\n')}`;
}

/** Tables and what is compared: row counts everywhere, and a checksum of one tenant's rows. */
export async function snapshot(knex: Knex, tenantId: string): Promise<Record<string, string>> {
  let sql = snapshotSql.get(knex);
  if (!sql) snapshotSql.set(knex, (sql = buildSnapshotSql(knex)));
  const { rows } = (await knex.raw(await sql, { tenant: tenantId })) as {
    rows: Array<Record<string, string>>;
  };
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(rows[0] ?? {})) {
    out[key.endsWith(' of') ? `${key} ${tenantId}` : key] = value;
  }
  return out;
}
