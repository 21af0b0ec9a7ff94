import { loadConfigOrExit } from '@switchboard/config';
import { explainDatabaseError, redactUrl } from './connection-error';
import { createKnex } from './knex';
import { migrateLatest } from './migrate';

// `npm run migrate`: applies pending migrations to DATABASE_URL and reports what it did.
async function main(): Promise<void> {
  const knex = createKnex(config.databaseUrl, { poolMax: 1, quietConnectionErrors: true });
  try {
    const applied = await migrateLatest(knex);
    process.stderr.write(
      applied.length
        ? `switchboard: applied migrations ${applied.join(', ')} to ${redactUrl(config.databaseUrl)}\n`
        : `switchboard: database ${redactUrl(config.databaseUrl)} is up to date\n`,
    );
  } finally {
    await knex.destroy();
  }
}

const config = loadConfigOrExit('operator');
main().catch((err: unknown) => {
  const why = explainDatabaseError(err, config.databaseUrl) ?? (err as Error).message;
  process.stderr.write(`switchboard: migration failed: ${why}\n`);
  process.exit(1);
});
