import { isTransientDbError } from './errors';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isTransientDbError', () => {
  it('retries what is about availability', () => {
    for (const err of [
      withCode('ECONNREFUSED'),
      withCode('ECONNRESET'),
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('57P03', 'the database system is starting up'),
      withCode('08006'),
      withCode('53300', 'sorry, too many clients already'),
      withCode('40001'),
      Object.assign(new Error('Knex: Timeout acquiring a connection'), {
        name: 'KnexTimeoutError',
      }),
      new Error('Connection terminated unexpectedly'),
      // Errors from another realm (Node's sockets under jest) are plain objects to instanceof.
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' },
      // A stopped container's host name no longer resolves.
      withCode('ENOTFOUND', 'getaddrinfo ENOTFOUND postgres'),
      // localhost tried on ::1 and 127.0.0.1, both refused.
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
    ]) {
      expect(isTransientDbError(err)).toBe(true);
    }
  });

  it('gives up on what would fail again', () => {
    for (const err of [
      withCode('22021', 'invalid byte sequence for encoding "UTF8": 0x00'),
      withCode('23505', 'duplicate key value violates unique constraint'),
      withCode('42P01', 'relation does not exist'),
      new Error('boom'),
      new AggregateError([withCode('ECONNREFUSED'), new Error('boom')]),
      null,
      'a string',
    ]) {
      expect(isTransientDbError(err)).toBe(false);
    }
  });
});
