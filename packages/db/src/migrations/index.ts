import type { Knex } from 'knex';
import * as m001 from './001_foundation';
import * as m002 from './002_calls';
import * as m003 from './003_webhooks';
import * as m004 from './004_deliveries';
import * as m005 from './005_outbound_idempotency';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/**
 * Every migration, in order. Names are stored in knex_migrations: never rename one; add a
 * new file and append it here.
 */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['001_foundation', m001],
  ['002_calls', m002],
  ['003_webhooks', m003],
  ['004_deliveries', m004],
  ['005_outbound_idempotency', m005],
];

/** A knex migration source over the list above (no file-system scanning, works under tsx). */
export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => MIGRATIONS.map(([name]) => name),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const found = MIGRATIONS.find(([n]) => n === name);
    if (!found) throw new Error(`unknown migration ${name}`);
    return found[1];
  },
};
