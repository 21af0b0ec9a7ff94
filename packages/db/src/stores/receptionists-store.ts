import type { Knex } from 'knex';
import { newId } from '../ids';
import { keysetPage, type KeysetPage, type KeysetPosition } from '../keyset';

const TABLE = 'receptionists';

export type ReceptionistStatus = 'provisioning' | 'ready' | 'error';

export interface Receptionist {
  id: string;
  tenantId: string;
  name: string;
  status: ReceptionistStatus;
  phoneNumber: string | null;
  assistantId: string | null;
  plan: string;
  greeting: string | null;
  webhookUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
  provisionedAt: Date | null;
}

interface ReceptionistRow {
  id: string;
  tenant_id: string;
  name: string;
  status: ReceptionistStatus;
  phone_number: string | null;
  assistant_id: string | null;
  plan: string;
  greeting: string | null;
  webhook_url: string | null;
  created_at: Date;
  updated_at: Date;
  provisioned_at: Date | null;
}

const toReceptionist = (r: ReceptionistRow): Receptionist => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  status: r.status,
  phoneNumber: r.phone_number,
  assistantId: r.assistant_id,
  plan: r.plan,
  greeting: r.greeting,
  webhookUrl: r.webhook_url,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  provisionedAt: r.provisioned_at,
});

export class ReceptionistsStore {
  constructor(private readonly db: Knex) {}

  async create(
    input: {
      tenantId: string;
      name: string;
      status: ReceptionistStatus;
      phoneNumber?: string | null;
      assistantId?: string | null;
      plan?: string;
      greeting?: string | null;
      provisionedAt?: Date | null;
    },
    trx: Knex = this.db,
  ): Promise<Receptionist> {
    const [row] = await trx<ReceptionistRow>(TABLE)
      .insert({
        id: newId('rcp'),
        tenant_id: input.tenantId,
        name: input.name,
        status: input.status,
        phone_number: input.phoneNumber ?? null,
        assistant_id: input.assistantId ?? null,
        plan: input.plan ?? 'standard',
        greeting: input.greeting ?? null,
        provisioned_at: input.provisionedAt ?? null,
      })
      .returning('*');
    return toReceptionist(row as ReceptionistRow);
  }

  /** The tenant's receptionist, or undefined (another tenant's id is simply not found). */
  async get(tenantId: string, id: string, trx: Knex = this.db): Promise<Receptionist | undefined> {
    const row = await trx<ReceptionistRow>(TABLE).where({ tenant_id: tenantId, id }).first();
    return row && toReceptionist(row);
  }

  async list(
    tenantId: string,
    page: { limit: number; after?: KeysetPosition | null },
  ): Promise<KeysetPage<Receptionist>> {
    const result = await keysetPage<ReceptionistRow>(
      this.db<ReceptionistRow>(TABLE).where({ tenant_id: tenantId }),
      {
        timeColumn: 'created_at',
        idColumn: 'id',
        ...page,
        position: (r) => ({ t: r.created_at.getTime(), id: r.id }),
      },
    );
    return { rows: result.rows.map(toReceptionist), next: result.next };
  }

  async listAllForTenant(tenantId: string): Promise<Receptionist[]> {
    const rows = await this.db<ReceptionistRow>(TABLE)
      .where({ tenant_id: tenantId })
      .orderBy('created_at');
    return rows.map(toReceptionist);
  }
}
