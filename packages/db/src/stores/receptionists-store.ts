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

  /** Updates ordinary fields and/or webhook_url; undefined when not the tenant's. */
  async update(
    tenantId: string,
    id: string,
    fields: { name?: string; greeting?: string | null; webhookUrl?: string | null },
  ): Promise<Receptionist | undefined> {
    const changes: Record<string, unknown> = {};
    if (fields.name !== undefined) changes.name = fields.name;
    if (fields.greeting !== undefined) changes.greeting = fields.greeting;
    if (fields.webhookUrl !== undefined) changes.webhook_url = fields.webhookUrl;
    const [row] = await this.db<ReceptionistRow>(TABLE)
      .where({ tenant_id: tenantId, id })
      .update({ ...changes, updated_at: this.db.fn.now() })
      .returning('*');
    return row && toReceptionist(row as ReceptionistRow);
  }

  /** The legacy webhook target of a receptionist (worker side: no tenant needed). */
  async getWebhookTarget(
    id: string,
    db: Knex = this.db,
  ): Promise<
    { tenantId: string; url: string | null; secretCiphertext: string | null } | undefined
  > {
    const row = (await db(TABLE)
      .select('tenant_id', 'webhook_url', 'webhook_secret_ciphertext')
      .where({ id })
      .first()) as
      | { tenant_id: string; webhook_url: string | null; webhook_secret_ciphertext: string | null }
      | undefined;
    return (
      row && {
        tenantId: row.tenant_id,
        url: row.webhook_url,
        secretCiphertext: row.webhook_secret_ciphertext,
      }
    );
  }

  /**
   * Stores the legacy webhook secret unless one exists already; returns the ciphertext in
   * force afterwards, so two racing first uses agree on one secret.
   */
  async ensureWebhookSecret(trx: Knex, id: string, ciphertext: string): Promise<string> {
    await trx(TABLE)
      .where({ id })
      .whereNull('webhook_secret_ciphertext')
      .update({ webhook_secret_ciphertext: ciphertext });
    const row = (await trx(TABLE).select('webhook_secret_ciphertext').where({ id }).first()) as {
      webhook_secret_ciphertext: string;
    };
    return row.webhook_secret_ciphertext;
  }
}
