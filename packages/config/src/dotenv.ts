import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';

/**
 * The variables of `.env` in `dir`, or none when there is no such file. Parsed by Node's own
 * dotenv parser (`KEY=value` lines, `#` comments, optional quotes).
 */
export function readDotEnv(dir: string = process.cwd()): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(join(dir, '.env'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  return parseEnv(text) as Record<string, string>;
}

/**
 * The environment over `.env`: a variable set in the environment always wins, even when it
 * is set to an empty string (which then means "use the default").
 */
export function withDotEnv(env: NodeJS.ProcessEnv, dir: string = process.cwd()): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...readDotEnv(dir) };
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined) merged[name] = value;
  }
  return merged;
}
