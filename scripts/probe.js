/* global require, process, console, setTimeout, Buffer, URL */
/* eslint-disable @typescript-eslint/no-require-imports */
'use strict';

// Small service probes used by scripts/ensure-services.sh. Plain CommonJS so it runs with
// bare `node` before anything is compiled.
//
//   node scripts/probe.js pg               can we log in to the server's maintenance database?
//   node scripts/probe.js redis            does Redis answer PING?
//   node scripts/probe.js createdb NAME    create database NAME on the DATABASE_URL server if missing
//   node scripts/probe.js describe pg      print "HOST PORT USER [DATABASE]" from DATABASE_URL
//   node scripts/probe.js describe redis   print "HOST PORT" from REDIS_URL
//
// Reads DATABASE_URL and REDIS_URL (same defaults as ensure-services.sh).
// Exit codes:
//   0  OK
//   1  not reachable (refused, timed out, still starting up): starting the service may help
//   2  the server answered but refused us (auth, permissions, ...): starting it will not help
//   3  the probe itself cannot run (bad usage, bad URL, node_modules missing)
// A one-line reason goes to stderr for every non-zero exit.

const os = require('node:os');

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/switchboard';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const TIMEOUT_MS = 2000;

const EXIT_OK = 0;
const EXIT_UNREACHABLE = 1;
const EXIT_REFUSED = 2;
const EXIT_PROBE_FAILED = 3;

function databaseUrl() {
  return process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
}

function redisUrl() {
  return process.env.REDIS_URL || DEFAULT_REDIS_URL;
}

function finish(code, message) {
  if (message) console.error(message);
  process.exit(code);
}

function load(name) {
  try {
    return require(name);
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND') {
      finish(EXIT_PROBE_FAILED, `cannot load '${name}': run npm ci at the repository root first`);
    }
    throw err;
  }
}

function parseUrl(raw, what) {
  try {
    return new URL(raw);
  } catch {
    return finish(EXIT_PROBE_FAILED, `${what} is not a valid URL`);
  }
}

// Never hang: whatever the driver does, give up a little after the connect timeout.
function hardTimeout() {
  setTimeout(() => finish(EXIT_UNREACHABLE, 'timed out'), TIMEOUT_MS + 1500).unref();
}

// ---------------------------------------------------------------- Postgres

// SQLSTATEs that mean "the server is there but not ready yet": keep waiting.
const PG_NOT_READY = new Set(['57P01', '57P02', '57P03']);

function pgExitCode(err) {
  const code = err && typeof err.code === 'string' ? err.code : '';
  if (/^[0-9A-Z]{5}$/.test(code) && !PG_NOT_READY.has(code)) return EXIT_REFUSED;
  // The server asked for a password that the URL does not carry: pg throws a plain Error.
  if (!code && /password|SASL|SCRAM/i.test((err && err.message) || '')) return EXIT_REFUSED;
  return EXIT_UNREACHABLE;
}

function pgError(err) {
  const text = (err && err.message) || String(err);
  return err && err.code ? `${text} (${err.code})` : text;
}

// Connection string for another database on the same server (same user, password, options).
function sameServer(database) {
  const url = parseUrl(databaseUrl(), 'DATABASE_URL');
  url.pathname = '/' + encodeURIComponent(database);
  return url.toString();
}

// Connect to the maintenance database ("postgres", or "template1" where it was dropped).
async function maintenanceClient(queryTimeout = TIMEOUT_MS) {
  const { Client } = load('pg');
  let lastErr;
  for (const database of ['postgres', 'template1']) {
    const client = new Client({
      connectionString: sameServer(database),
      connectionTimeoutMillis: TIMEOUT_MS,
      query_timeout: queryTimeout,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      return client;
    } catch (err) {
      lastErr = err;
      await client.end().catch(() => {});
      if (!(err && err.code === '3D000')) break; // only retry "database does not exist"
    }
  }
  throw lastErr;
}

async function probePg() {
  let client;
  try {
    client = await maintenanceClient();
    await client.query('SELECT 1');
  } catch (err) {
    return finish(pgExitCode(err), pgError(err));
  } finally {
    if (client) await client.end().catch(() => {});
  }
  return finish(EXIT_OK);
}

async function createDb(name) {
  if (!name) return finish(EXIT_PROBE_FAILED, 'usage: probe.js createdb NAME');
  if (Buffer.byteLength(name) > 63) {
    return finish(EXIT_PROBE_FAILED, `database name '${name}' is longer than 63 bytes`);
  }
  let client;
  try {
    client = await maintenanceClient(12000);
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount > 0) {
      console.log('exists');
    } else {
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
        console.log('created');
      } catch (err) {
        // Someone else created it between our check and our CREATE: fine.
        if (!(err && (err.code === '42P04' || err.code === '23505'))) throw err;
        console.log('exists');
      }
    }
  } catch (err) {
    return finish(pgExitCode(err), pgError(err));
  } finally {
    if (client) await client.end().catch(() => {});
  }
  return finish(EXIT_OK);
}

// ---------------------------------------------------------------- Redis

async function probeRedis() {
  const Redis = load('ioredis');
  const redis = new Redis(redisUrl(), {
    lazyConnect: true,
    connectTimeout: TIMEOUT_MS,
    commandTimeout: TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    enableReadyCheck: false,
  });
  // Errors during the handshake (a rejected AUTH, for one) arrive as events, while connect()
  // only sees "Connection is closed": remember the server's reply so we can report it.
  // The same goes for the network cause (ENOTFOUND, ECONNREFUSED, ...).
  let replyError;
  let lastError;
  redis.on('error', (err) => {
    if (err && err.name === 'ReplyError') replyError = err;
    lastError = err;
  });
  try {
    await redis.connect();
    const reply = await redis.ping();
    if (reply !== 'PONG') return finish(EXIT_REFUSED, `unexpected PING reply: ${reply}`);
  } catch (caught) {
    const err = caught && caught.name === 'ReplyError' ? caught : replyError || lastError || caught;
    const text = (err && err.message) || String(err);
    // A ReplyError came from the server (NOAUTH, WRONGPASS, ...); LOADING means "wait".
    const answered = err && err.name === 'ReplyError' && !/^LOADING/.test(text);
    return finish(answered ? EXIT_REFUSED : EXIT_UNREACHABLE, text);
  } finally {
    redis.disconnect();
  }
  return finish(EXIT_OK);
}

// ---------------------------------------------------------------- describe

function describe(which) {
  if (which === 'pg') {
    const url = parseUrl(databaseUrl(), 'DATABASE_URL');
    // A "host" query parameter (unix socket directory) wins over the URL host, as in pg.
    const host = url.searchParams.get('host') || url.hostname || 'localhost';
    const port = url.searchParams.get('port') || url.port || '5432';
    const user = decodeURIComponent(url.username) || process.env.PGUSER || os.userInfo().username;
    const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
    // Database last: it may be empty (pg then defaults to the user name).
    console.log([host, port, user, database].join(' ').trim());
    return finish(EXIT_OK);
  }
  if (which === 'redis') {
    const url = parseUrl(redisUrl(), 'REDIS_URL');
    console.log(`${url.hostname || '127.0.0.1'} ${url.port || '6379'}`);
    return finish(EXIT_OK);
  }
  return finish(EXIT_PROBE_FAILED, 'usage: probe.js describe pg|redis');
}

// ---------------------------------------------------------------- main

function main(argv) {
  const [command, arg] = argv;
  switch (command) {
    case 'pg':
      hardTimeout();
      return probePg();
    case 'redis':
      hardTimeout();
      return probeRedis();
    case 'createdb':
      // CREATE DATABASE can take a moment on a busy server: allow a bit more than a probe.
      setTimeout(() => finish(EXIT_UNREACHABLE, 'timed out'), 15000).unref();
      return createDb(arg);
    case 'describe':
      return describe(arg);
    default:
      return finish(
        EXIT_PROBE_FAILED,
        'usage: probe.js pg | redis | createdb NAME | describe pg|redis',
      );
  }
}

Promise.resolve(main(process.argv.slice(2))).catch((err) =>
  finish(EXIT_PROBE_FAILED, (err && err.stack) || String(err)),
);
