import type { OperatorConfig } from '@switchboard/config';
import { createKnex, createStores, type Knex, type Stores } from '@switchboard/db';

/** What the operator commands use: one knex and the stores built over it. */
export interface CliContext {
  config: OperatorConfig;
  knex: Knex;
  stores: Stores;
}

export function createCliContext(config: OperatorConfig): CliContext {
  const knex = createKnex(config.databaseUrl, { poolMax: 4, quietConnectionErrors: true });
  return { config, knex, stores: createStores(knex) };
}
