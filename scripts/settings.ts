/**
 * `npm start`'s memory of its setup (scripts/lib.sh, load_env): writes to `.env` every
 * setting this start was given in the environment (but NOT_COPIED), and the ones it chose
 * itself (PORT, DATABASE_URL, REDIS_URL, METRICS_PORT, QUEUE_PREFIX: their defaults, the
 * first time; fresh secrets, once), so that the CLI, `npm run migrate`, the `demo:*` scripts
 * and the next `npm start` use the same ones without anything exported. A variable set in the
 * environment still wins over `.env` for every command (packages/config, withDotEnv).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { envSchema } from '../packages/config/src/schema';

const FILE = '.env';
/** Settings written with their default when neither the environment nor `.env` has them. */
const CHOSEN = ['PORT', 'DATABASE_URL', 'REDIS_URL', 'METRICS_PORT', 'QUEUE_PREFIX'] as const;
/** Development only: never written to `.env` (see below). */
const NEVER_SAVED: readonly string[] = ['WEBHOOK_ALLOW_PRIVATE_TARGETS'];
/** Not copied from the environment: NODE_ENV is the deployment's, not this checkout's. */
const NOT_COPIED: readonly string[] = [...NEVER_SAVED, 'NODE_ENV'];
const SECRETS: Record<string, () => string> = {
  INGEST_TOKEN: () => randomBytes(24).toString('hex'),
  CURSOR_SECRET: () => randomBytes(24).toString('hex'),
  SECRET_ENCRYPTION_KEY: () => randomBytes(32).toString('base64'),
};
const properties: Record<string, { default?: unknown; description?: string }> =
  envSchema.properties;

/** A value as a dotenv line: bare when plain, else quoted the way Node's parser reads. */
const quote = (value: string): string => {
  if (/^[\w.:/@%+=,{}?&~-]*$/.test(value)) return value;
  return value.includes("'") ? `"${value}"` : `'${value}'`;
};

const current = existsSync(FILE)
  ? (parseEnv(readFileSync(FILE, 'utf8')) as Record<string, string>)
  : {};
const next: Record<string, string> = { ...current };
for (const name of Object.keys(properties)) {
  if (NOT_COPIED.includes(name)) continue;
  const given = process.env[name];
  if (given !== undefined && given !== '') next[name] = given;
}
for (const name of CHOSEN) {
  // A Redis Cluster replaces REDIS_URL: setting both is refused (packages/config).
  if (name === 'REDIS_URL' && next.REDIS_CLUSTER_NODES !== undefined) continue;
  next[name] ??= String(properties[name]?.default);
}
for (const [name, make] of Object.entries(SECRETS)) next[name] ??= make();
// Development only, never saved: `.env` may end up beside a deployment, and these would follow
// it there. npm start sets WEBHOOK_ALLOW_PRIVATE_TARGETS for the processes it starts
// (scripts/start.sh); a file of an earlier version that saved it loses it here.
for (const name of NEVER_SAVED) {
  if (next[name] === undefined) continue;
  process.stderr.write(`switchboard: ${name} is no longer kept in ${FILE} (development only)\n`);
  delete next[name];
}

const lines = [
  '# Local settings of this checkout, written by npm start (scripts/settings.ts). Not committed.',
  '# Every command reads them (the CLI, npm run migrate, the demo scripts); a variable set in',
  '# the environment wins. SECRET_ENCRYPTION_KEY encrypts the webhook secrets in DATABASE_URL:',
  '# keep the two together.',
  // The Configuration table's order (the schema's), then anything else, by name.
  ...[
    ...Object.keys(properties).filter((name) => next[name] !== undefined),
    ...Object.keys(next)
      .filter((name) => !(name in properties))
      .sort(),
  ].map((name) => `${name}=${quote(next[name] as string)}`),
];
const text = `${lines.join('\n')}\n`;
if (!existsSync(FILE) || readFileSync(FILE, 'utf8') !== text) {
  writeFileSync(FILE, text, { mode: 0o600 });
  process.stderr.write(`switchboard: settings saved in ${FILE}\n`);
}
