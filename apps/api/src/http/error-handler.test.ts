import express from 'express';
import request from 'supertest';
import { createLogger } from '@switchboard/logger';
import { errorHandler } from './error-handler';
import { requestId } from './request-id';

// Backend outages become 503 service_unavailable (never a 500), including the errors a
// Redis Cluster raises when the master of the deployment's slot is away.
const appThrowing = (err: Error) => {
  const app = express();
  app.use(requestId);
  app.get('/', () => {
    throw err;
  });
  app.use(errorHandler(createLogger('api', 'silent')));
  return app;
};

const named = (name: string, message: string) => Object.assign(new Error(message), { name });

it.each([
  [
    'a producer while Redis is away',
    new Error("Stream isn't writeable and enableOfflineQueue options is false"),
  ],
  [
    'a cluster that is not ready',
    new Error("Cluster isn't ready and enableOfflineQueue options is false"),
  ],
  ['a slot without a master', named('ReplyError', 'CLUSTERDOWN The cluster is down')],
  [
    'endless redirections',
    new Error('Too many Cluster redirections. Last error: Error: connect ECONNREFUSED'),
  ],
  // Postgres stopped (pg_ctl stop -m fast) under ingestion: the connection of a transaction
  // died, and knex's ROLLBACK or COMMIT on it failed with node-postgres' message (no code).
  [
    'a rollback on a lost Postgres connection',
    new Error('ROLLBACK - Client has encountered a connection error and is not queryable'),
  ],
  [
    'a commit on a lost Postgres connection',
    new Error('COMMIT; - Client has encountered a connection error and is not queryable'),
  ],
  ['Postgres shutting down', Object.assign(new Error('terminating connection'), { code: '57P01' })],
  ['no Postgres connection in time', named('KnexTimeoutError', 'Knex: Timeout acquiring')],
  [
    'no node answering the slot map',
    named('ClusterAllFailedError', 'Failed to refresh slots cache.'),
  ],
])('%s → 503 with Retry-After', async (_what, err) => {
  const res = await request(appThrowing(err)).get('/');
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toBeDefined();
  expect(res.body.error.type).toBe('service_unavailable');
});

it('anything else stays a 500 that says nothing', async () => {
  const res = await request(appThrowing(new Error('a bug mentioning CLUSTERDOWN'))).get('/');
  expect(res.status).toBe(500);
  expect(res.body.error.message).toBe('An internal error occurred');
});
