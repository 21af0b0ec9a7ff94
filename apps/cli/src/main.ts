import { loadConfigOrExit } from '@switchboard/config';
import { explainDatabaseError } from '@switchboard/db';
import { USAGE_HEAD, UsageError } from './args';
import { COMMANDS, type CommandSpec } from './commands';
import { createCliContext } from './context';

const USAGE = [
  USAGE_HEAD,
  ...Object.values(COMMANDS).map((c) => `  ${c.usage.padEnd(72)} ${c.about}`),
].join('\n');

const HELP = new Set(['--help', '-h', 'help']);

function resolve(argv: string[]): [string, CommandSpec, string[]] | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const command = COMMANDS[name];
    if (command) return [name, command, argv.slice(words)];
  }
  return undefined;
}

/**
 * The answer to an invocation that needs no database: the help a user asked for (stdout,
 * exit 0), or the usage of a bad one (stderr, exit 2). Null when `argv` names a command to run.
 */
export function helpFor(argv: string[]): { code: 0 | 2; stdout: string; stderr: string } | null {
  const found = resolve(argv);
  if (!found) {
    if (argv.length && HELP.has(argv[0] as string))
      return { code: 0, stdout: `${USAGE}\n`, stderr: '' };
    const why = argv.length ? `unknown command "${argv.join(' ')}"` : 'no command given';
    return { code: 2, stdout: '', stderr: `${why}\n${USAGE}\n` };
  }
  const [, command, rest] = found;
  if (!rest.some((a) => HELP.has(a))) return null;
  return {
    code: 0,
    stdout: `usage: npm run --silent cli -- ${command.usage}\n  ${command.about}\n`,
    stderr: '',
  };
}

// Operator CLI: one JSON document on stdout; diagnostics and usage on stderr, except the
// help a user asked for (--help, -h), which goes to stdout with exit 0.
async function main(argv: string[]): Promise<number> {
  const help = helpFor(argv);
  if (help) {
    process.stdout.write(help.stdout);
    process.stderr.write(help.stderr);
    return help.code;
  }
  const [name, command, rest] = resolve(argv) as [string, CommandSpec, string[]];
  const config = loadConfigOrExit('operator');
  const ctx = createCliContext(config);
  try {
    const run = await command.load();
    const out = await run(ctx, rest);
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\nusage: npm run --silent cli -- ${command.usage}\n`);
      return 2;
    }
    const why = explainDatabaseError(err, config.databaseUrl) ?? (err as Error).message;
    process.stderr.write(`switchboard: ${name}: ${why}\n`);
    return 1;
  } finally {
    await ctx.knex.destroy();
  }
}

// Run only as the program (the compiled CLI, or tsx): tests import helpFor.
if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
