// Row shape and mapper of the receptionists table, shared by the store (reads, ordinary
// updates) and the provisioning lifecycle. Row types never leave the db package.

export type ReceptionistStatus = 'provisioning' | 'ready' | 'error';

/** Why provisioning failed: set with status `error`, cleared when provisioning starts again. */
export interface ReceptionistError {
  code: string;
  message: string;
  failedAt: Date;
}

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
  /** The area code asked for when it was created (null: any). */
  areaCode: string | null;
  error: ReceptionistError | null;
  createdAt: Date;
  updatedAt: Date;
  provisionedAt: Date | null;
  /** Counts the changes made by its PATCHes: its ETag, `W/"<version>"`. */
  version: number;
}

export interface ReceptionistRow {
  id: string;
  tenant_id: string;
  name: string;
  status: ReceptionistStatus;
  phone_number: string | null;
  assistant_id: string | null;
  plan: string;
  greeting: string | null;
  webhook_url: string | null;
  area_code: string | null;
  error_code: string | null;
  error_message: string | null;
  failed_at: Date | null;
  created_at: Date;
  updated_at: Date;
  provisioned_at: Date | null;
  version: number;
}

/** The columns a Receptionist is read from (never the webhook secret). */
export const RECEPTIONIST_COLUMNS = [
  'id',
  'tenant_id',
  'name',
  'status',
  'phone_number',
  'assistant_id',
  'plan',
  'greeting',
  'webhook_url',
  'area_code',
  'error_code',
  'error_message',
  'failed_at',
  'created_at',
  'updated_at',
  'provisioned_at',
  'version',
] as const;

export const toReceptionist = (r: ReceptionistRow): Receptionist => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  status: r.status,
  phoneNumber: r.phone_number,
  assistantId: r.assistant_id,
  plan: r.plan,
  greeting: r.greeting,
  webhookUrl: r.webhook_url,
  areaCode: r.area_code,
  error:
    r.error_code !== null
      ? {
          code: r.error_code,
          message: r.error_message ?? '',
          failedAt: r.failed_at ?? r.updated_at,
        }
      : null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  provisionedAt: r.provisioned_at,
  version: r.version,
});
