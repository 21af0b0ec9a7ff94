import knexFactory from 'knex';
import { migrateLatest } from '../../packages/db/src/migrate';
import { databaseUrl, SERVER_URL, templateName } from './env';

/** Migrates a template database once per run; every test file clones it. */
export default async function globalSetup(): Promise<void> {
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
