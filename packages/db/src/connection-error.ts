/** `url` without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    return '(DATABASE_URL is not a URL)';
  }
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ECONNRESET',
]);

const codeOf = (err: unknown): string | undefined => {
  const e = err as { code?: unknown; errors?: unknown[] };
  if (typeof e?.code === 'string') return e.code;
  // Node's happy eyeballs (localhost = ::1 and 127.0.0.1) fails with an AggregateError.
  return Array.isArray(e?.errors) ? codeOf(e.errors[0]) : undefined;
};

/**
 * One line for an operator when a command could not use Postgres: which URL it tried (never
 * its password) and what to do. Null for any other error, which the caller reports as is.
 */
export function explainDatabaseError(err: unknown, databaseUrl: string): string | null {
  const code = codeOf(err);
  const where = redactUrl(databaseUrl);
  const message = (err as Error)?.message ?? String(err);
  if (code && UNREACHABLE.has(code)) {
    return `cannot reach Postgres at ${where} (${code}): start it, or set DATABASE_URL (npm start keeps the one it used in .env)`;
  }
  if (code === '3D000') return `${message} (at ${where}): create it, or set DATABASE_URL`;
  if (code === '28P01' || code === '28000') {
    return `Postgres at ${where} refused the login (${message}): fix the user or password in DATABASE_URL`;
  }
  if (code === '42P01') {
    return `${message} at ${where}: the database is not migrated (npm run migrate)`;
  }
  return null;
}
