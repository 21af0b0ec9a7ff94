import { loadConfigOrExit } from '@switchboard/config';
import { USAGE, UsageError } from './args';
import {
  keyCreate,
  keyRevoke,
  receptionistCreate,
  tenantCreate,
  tenantLimits,
} from './commands/basic';
import { leadImport } from './commands/lead-import';
import { tenantRetention } from './commands/retention';
import { seedDemo } from './commands/seed-demo';
import { createCliContext, type CliContext } from './context';

type Command = (ctx: CliContext, argv: string[]) => Promise<object>;

const COMMANDS: Record<string, Command> = {
  'tenant create': tenantCreate,
  'tenant limits': tenantLimits,
  'tenant retention': tenantRetention,
  'key create': keyCreate,
  'key revoke': keyRevoke,
  'receptionist create': receptionistCreate,
  'lead import': leadImport,
  'seed-demo': (ctx, argv) => {
    if (argv.length) throw new UsageError('seed-demo takes no options');
    return seedDemo(ctx, (line) => process.stderr.write(`switchboard: ${line}\n`));
  },
};

function resolve(argv: string[]): [Command, string[]] {
  for (const words of [2, 1]) {
    const command = COMMANDS[argv.slice(0, words).join(' ')];
    if (command) return [command, argv.slice(words)];
  }
  throw new UsageError(argv.length ? `unknown command "${argv.join(' ')}"` : 'no command given');
}

// Operator CLI: one JSON document on stdout; diagnostics and usage on stderr.
async function main(): Promise<number> {
  let command: Command;
  let rest: string[];
  try {
    [command, rest] = resolve(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const ctx = createCliContext(loadConfigOrExit('operator'));
  try {
    const out = await command(ctx, rest);
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`switchboard: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await ctx.knex.destroy();
  }
}

main().then((code) => process.exit(code));
