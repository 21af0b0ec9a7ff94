import type { Knex } from 'knex';
import { newId } from '../ids';
import { newestFirst, type KeysetPage, type PageRequest } from '../keyset';
import { explainMiss, whereVersion, type VersionCondition } from '../versions';
import {
  RECEPTIONIST_COLUMNS,
  toReceptionist,
  type Receptionist,
  type ReceptionistRow,
  type ReceptionistStatus,
} from './receptionists-rows';

export type { Receptionist, ReceptionistError, ReceptionistStatus } from './receptionists-rows';

const TABLE = 'receptionists';

export class ReceptionistsStore {
  constructor(private readonly db: Knex) {}

  /**
   * Inserts a receptionist as given (the operator CLI's ready ones, fixtures), in the
   * caller's transaction. It starts no provisioning: a receptionist to be provisioned is
   * created by `ProvisioningLifecycle.create`, which also schedules its first attempt.
   */
  async insert(
    trx: Knex,
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
      .returning(RECEPTIONIST_COLUMNS);
    return toReceptionist(row as ReceptionistRow);
  }

  /** `insert` on the pool (one autocommit statement). */
  create(input: Parameters<ReceptionistsStore['insert']>[1]): Promise<Receptionist> {
    return this.insert(this.db, input);
  }

  /** The tenant's receptionist, or undefined (another tenant's id is simply not found). */
  /** Any tenant's receptionist a telephony message names, as ingestion needs it. */
  async reportTarget(
    trx: Knex,
    id: string,
  ): Promise<{ id: string; tenantId: string; phoneNumber: string | null } | undefined> {
    const row = (await trx(TABLE).where({ id }).first('id', 'tenant_id', 'phone_number')) as
      { id: string; tenant_id: string; phone_number: string | null } | undefined;
    return row && { id: row.id, tenantId: row.tenant_id, phoneNumber: row.phone_number };
  }

  async get(db: Knex, tenantId: string, id: string): Promise<Receptionist | undefined> {
    const row = (await db(TABLE)
      .select(RECEPTIONIST_COLUMNS)
      .where({ tenant_id: tenantId, id })
      .first()) as ReceptionistRow | undefined;
    return row && toReceptionist(row);
  }

  async list(tenantId: string, page: PageRequest): Promise<KeysetPage<Receptionist>> {
    return newestFirst(
      this.db(TABLE).select(RECEPTIONIST_COLUMNS).where({ tenant_id: tenantId }),
      page,
      toReceptionist,
      { time: 'created_at' },
    );
  }

  async listAllForTenant(tenantId: string): Promise<Receptionist[]> {
    const rows = (await this.db(TABLE)
      .select(RECEPTIONIST_COLUMNS)
      .where({ tenant_id: tenantId })
      .orderBy('created_at')) as ReceptionistRow[];
    return rows.map(toReceptionist);
  }

  /**
   * Updates ordinary fields and/or webhook_url and counts one more version; undefined when
   * not the tenant's, VersionMismatch when its version is not one `condition` accepts.
   */
  async update(
    tenantId: string,
    id: string,
    fields: { name?: string; greeting?: string | null; webhookUrl?: string | null },
    condition: VersionCondition = null,
  ): Promise<Receptionist | undefined> {
    const changes: Record<string, unknown> = {};
    if (fields.name !== undefined) changes.name = fields.name;
    if (fields.greeting !== undefined) changes.greeting = fields.greeting;
    if (fields.webhookUrl !== undefined) changes.webhook_url = fields.webhookUrl;
    const where = { tenant_id: tenantId, id };
    const [row] = await whereVersion(this.db(TABLE).where(where), condition)
      .update({ ...changes, updated_at: this.db.fn.now(), version: this.db.raw('version + 1') })
      .returning(RECEPTIONIST_COLUMNS);
    if (!row) await explainMiss(this.db, TABLE, where, condition);
    return row && toReceptionist(row as ReceptionistRow);
  }

  /** The legacy webhook target of a receptionist (worker side: no tenant needed). */
  async getWebhookTarget(
    db: Knex,
    id: string,
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
