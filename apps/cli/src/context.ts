import type { OperatorConfig } from '@switchboard/config';
import {
  ApiKeysStore,
  createKnex,
  ReceptionistsStore,
  TenantsStore,
  UsageStore,
  type Knex,
} from '@switchboard/db';

/** What the operator commands use: one knex and its stores. */
export interface CliContext {
  config: OperatorConfig;
  knex: Knex;
  tenants: TenantsStore;
  apiKeys: ApiKeysStore;
  receptionists: ReceptionistsStore;
  usage: UsageStore;
}

export function createCliContext(config: OperatorConfig): CliContext {
  const knex = createKnex(config.databaseUrl, { poolMax: 4, quietConnectionErrors: true });
  return {
    config,
    knex,
    tenants: new TenantsStore(knex),
    apiKeys: new ApiKeysStore(knex),
    receptionists: new ReceptionistsStore(knex),
    usage: new UsageStore(knex),
  };
}
