import { loadConfigOrExit } from '@switchboard/config';
import { createKnex } from './knex';
import { migrateLatest } from './migrate';

// `npm run migrate`: applies pending migrations to DATABASE_URL and reports what it did.
async function main(): Promise<void> {
  const config = loadConfigOrExit('operator');
  const knex = createKnex(config.databaseUrl, { poolMax: 1 });
  try {
    const applied = await migrateLatest(knex);
    process.stderr.write(
      applied.length
        ? `switchboard: applied migrations ${applied.join(', ')}\n`
        : 'switchboard: database is up to date\n',
    );
  } finally {
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`switchboard: migration failed: ${(err as Error).message}\n`);
  process.exit(1);
});
