import express from 'express';
import type { Client } from 'pg';
import request from 'supertest';
import { errorHandler } from '../../apps/api/src/http/error-handler';
import { requestId } from '../../apps/api/src/http/request-id';
import { createLogger } from '@switchboard/logger';
import { createTestContext, type TestContext } from '../support/context';

// Found by the postgres-outage chaos part (docs/RELIABILITY.md): when Postgres ends the
// session of an open transaction (as `pg_ctl stop -m fast` does to every session), the next
// statement and then knex's ROLLBACK fail with node-postgres' "Client has encountered a
// connection error and is not queryable", which has no code. The API answered that with a
// 500; it is an outage like any other: 503 with Retry-After. The error here is the real one,
// made by ending the transaction's own backend.
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/** The error of a transaction whose session the server ended between two statements. */
async function lostTransactionError(): Promise<Error> {
  const connection = (await ctx.deps.knex.client.acquireConnection()) as Client;
  const ended = new Promise((resolve) => connection.once('end', resolve));
  try {
    return await ctx.deps.knex
      .transaction(
        async (trx) => {
          const { rows } = await trx.raw('SELECT pg_backend_pid() AS pid');
          await ctx.deps.knex.raw('SELECT pg_terminate_backend(?)', [rows[0].pid]);
          await ended;
          await trx.raw('SELECT 1');
        },
        { connection },
      )
      .then(
        () => new Error('the transaction committed'),
        (err: Error) => err,
      );
  } finally {
    await ctx.deps.knex.client.releaseConnection(connection);
  }
}

it('a transaction whose connection was lost is a 503 with Retry-After, not a 500', async () => {
  const err = await lostTransactionError();
  expect(err.message).toMatch(/not queryable/);
  const app = express();
  app.use(requestId);
  app.get('/', () => {
    throw err;
  });
  app.use(errorHandler(createLogger('api', 'silent')));
  const res = await request(app).get('/');
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toBe('1');
  expect(res.body.error).toMatchObject({
    type: 'service_unavailable',
    code: 'service_unavailable',
  });
});
