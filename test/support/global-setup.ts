import knexFactory from 'knex';
import { buildServices } from '../../scripts/bundle';
import { ROOT, TEST_BUNDLES } from './bundles';
import { migrateLatest } from '../../packages/db/src/migrate';
import { databaseUrl, SERVER_URL, templateName } from './env';

/**
 * Migrates a template database once per run (every test file clones it), and compiles the
 * services and the test worker, so that a test starting a process starts what `npm run
 * build` makes, from sources of this very run (one bundle loads in about half the time of
 * the TypeScript through a loader).
 */
export default async function globalSetup(): Promise<void> {
  await buildServices(ROOT, TEST_BUNDLES);
  const admin = knexFactory({ client: 'pg', connection: SERVER_URL, pool: { min: 0, max: 1 } });
  try {
    const name = templateName();
    await admin.raw('DROP DATABASE IF EXISTS ??', [name]);
    await admin.raw('CREATE DATABASE ??', [name]);
  } finally {
    await admin.destroy();
  }
  const template = knexFactory({
    client: 'pg',
    connection: databaseUrl(templateName()),
    pool: { min: 0, max: 1 },
  });
  try {
    await migrateLatest(template);
  } finally {
    await template.destroy();
  }
}
