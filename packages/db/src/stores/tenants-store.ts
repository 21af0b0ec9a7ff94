import type { Knex } from 'knex';
import { newId } from '../ids';

const TABLE = 'tenants';

export interface Tenant {
  id: string;
  name: string;
  planMinutes: number;
  createdAt: Date;
}

interface TenantRow {
  id: string;
  name: string;
  plan_minutes: number;
  created_at: Date;
}

const toTenant = (r: TenantRow): Tenant => ({
  id: r.id,
  name: r.name,
  planMinutes: r.plan_minutes,
  createdAt: r.created_at,
});

export class TenantsStore {
  constructor(private readonly db: Knex) {}

  async create(input: { name: string; planMinutes?: number }): Promise<Tenant> {
    const [row] = await this.db<TenantRow>(TABLE)
      .insert({ id: newId('ten'), name: input.name, plan_minutes: input.planMinutes ?? 1000 })
      .returning('*');
    return toTenant(row as TenantRow);
  }

  async get(id: string): Promise<Tenant | undefined> {
    const row = await this.db<TenantRow>(TABLE).where({ id }).first();
    return row && toTenant(row);
  }

  async findByName(name: string): Promise<Tenant | undefined> {
    const row = await this.db<TenantRow>(TABLE).where({ name }).orderBy('created_at').first();
    return row && toTenant(row);
  }
}
