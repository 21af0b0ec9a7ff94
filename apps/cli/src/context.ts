import type { Config } from '@switchboard/config';
import {
  ApiKeysStore,
  createKnex,
  ReceptionistsStore,
  TenantsStore,
  type Knex,
} from '@switchboard/db';

/** What the operator commands use: one knex and its stores. */
export interface CliContext {
  config: Config;
  knex: Knex;
  tenants: TenantsStore;
  apiKeys: ApiKeysStore;
  receptionists: ReceptionistsStore;
}

export function createCliContext(config: Config): CliContext {
  const knex = createKnex(config.databaseUrl, { poolMax: 4 });
  return {
    config,
    knex,
    tenants: new TenantsStore(knex),
    apiKeys: new ApiKeysStore(knex),
    receptionists: new ReceptionistsStore(knex),
  };
}
