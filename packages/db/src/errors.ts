/** SQLSTATEs that say "try again later", not "this statement is wrong". */
const TRANSIENT_SQLSTATES = new Set([
  '57P01', // admin_shutdown: the server is stopping
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '57014', // query_canceled (statement timeout)
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);
/** Socket errors of a connection that could not be made or was lost. */
const TRANSIENT_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // The database's host name no longer resolves: what a stopped container's name does in a
  // compose network (docker/compose.yaml), an outage like the others.
  'ENOTFOUND',
]);
/** node-postgres reports a lost connection without a code, by message only. */
const LOST_CONNECTION =
  /Connection terminated|Connection ended unexpectedly|not queryable|timeout exceeded when trying to connect/i;

/**
 * True when a Postgres error is about availability (the server is down, restarting, or the
 * connection was lost; a serialization failure or deadlock), so the same statement may well
 * succeed later. False for errors that would fail again: bad data, constraint violations,
 * bugs. Callers retry the first kind and give up on the second.
 */
export function isTransientDbError(err: unknown): boolean {
  // Duck-typed, not `instanceof Error`: errors from Node's sockets may come from another realm.
  if (typeof err !== 'object' || err === null) return false;
  const { code, name, message, errors } = err as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
    errors?: unknown;
  };
  // Node's happy eyeballs (localhost: ::1 and 127.0.0.1) fails with an AggregateError of
  // one error per address tried.
  if (Array.isArray(errors) && errors.length > 0) return errors.every(isTransientDbError);
  if (typeof code === 'string') {
    // Class 08: connection exception; class 53: insufficient resources (too many clients...).
    if (code.startsWith('08') || code.startsWith('53')) return true;
    if (TRANSIENT_SQLSTATES.has(code) || TRANSIENT_SOCKET_CODES.has(code)) return true;
  }
  // knex's "Timeout acquiring a connection": the pool could not open one in time.
  if (name === 'KnexTimeoutError') return true;
  return typeof message === 'string' && LOST_CONNECTION.test(message);
}
