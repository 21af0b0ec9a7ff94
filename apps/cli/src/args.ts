import { parseArgs } from 'node:util';

/** The first line of every usage text. */
export const USAGE_HEAD =
  'usage: npm run --silent cli -- <command> [options]   (--help on any command)';

/** A bad invocation: printed with the usage text, exit code 2. */
export class UsageError extends Error {}

export type Options = Record<string, string | undefined>;

/**
 * Parses `--flag value` options (and the value-less `switches`, read as "" when given),
 * refusing unknown flags and positionals.
 */
export function parseOptions(argv: string[], allowed: string[], switches: string[] = []): Options {
  try {
    const { values } = parseArgs({
      args: argv,
      options: Object.fromEntries(
        allowed.map((name) => [
          name,
          { type: switches.includes(name) ? ('boolean' as const) : ('string' as const) },
        ]),
      ),
      strict: true,
      allowPositionals: false,
    });
    return Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, typeof v === 'boolean' ? '' : v]),
    ) as Options;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function required(options: Options, name: string): string {
  const value = options[name];
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}
