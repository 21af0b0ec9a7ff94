import { parseArgs } from 'node:util';

export const USAGE = [
  'usage: npm run --silent cli -- <command>',
  '  tenant create --name NAME [--plan-minutes N]',
  '  tenant limits --id TENANT_ID (--rate PER_SECOND --burst N | --default)',
  '  tenant retention --id TENANT_ID [--calls-days N|forever] [--delivery-days N|default]',
  '  key create --tenant TENANT_ID --scopes read,write,admin [--name NAME]',
  '  key revoke --id KEY_ID',
  '  receptionist create --tenant TENANT_ID --name NAME',
  '  lead import --tenant TENANT_ID --file leads.csv',
  '  seed-demo',
].join('\n');

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
