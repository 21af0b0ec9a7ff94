import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { keysetPage, type KeysetPage, type KeysetPosition } from '../keyset';

const TABLE = 'webhook_subscriptions';

/** Why a subscription was turned off; null while it is active or was never disabled. */
export type WebhookDisabledReason = 'consecutive_failures';

/** A subscription as the rest of the code sees it: the secret is deliberately absent. */
export interface WebhookSubscription {
  id: string;
  tenantId: string;
  url: string;
  /** Empty = every event. */
  events: string[];
  description: string | null;
  isActive: boolean;
  consecutiveFailures: number;
  createdAt: Date;
  updatedAt: Date;
  disabledAt: Date | null;
  disabledReason: WebhookDisabledReason | null;
  lastDeliveryAt: Date | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
}

/** The encrypted signing secret of one subscription, as stored. */
export interface SealedSecret {
  ciphertext: string;
  keyId: string;
}

interface WebhookSubscriptionRow {
  id: string;
  tenant_id: string;
  url: string;
  events: string[];
  description: string | null;
  is_active: boolean;
  consecutive_failures: number;
  created_at: Date;
  updated_at: Date;
  disabled_at: Date | null;
  disabled_reason: WebhookDisabledReason | null;
  last_delivery_at: Date | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
}

/** Every column except the secret ones: no ordinary read ever loads the ciphertext. */
const COLUMNS = [
  'id',
  'tenant_id',
  'url',
  'events',
  'description',
  'is_active',
  'consecutive_failures',
  'created_at',
  'updated_at',
  'disabled_at',
  'disabled_reason',
  'last_delivery_at',
  'last_success_at',
  'last_failure_at',
] as const;

const toSubscription = (r: WebhookSubscriptionRow): WebhookSubscription => ({
  id: r.id,
  tenantId: r.tenant_id,
  url: r.url,
  events: r.events,
  description: r.description,
  isActive: r.is_active,
  consecutiveFailures: r.consecutive_failures,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
  lastDeliveryAt: r.last_delivery_at,
  lastSuccessAt: r.last_success_at,
  lastFailureAt: r.last_failure_at,
});

/** Subscription ids are plain UUIDs (docs/API.md, Basics), chosen before the insert. */
export const newWebhookSubscriptionId = (): string => randomUUID();

/**
 * The encryption context of a subscription's secret: a ciphertext only decrypts for the row
 * (tenant and id) it was written for. Encrypt and decrypt must both use this.
 */
export const webhookSecretContext = (tenantId: string, subscriptionId: string): string =>
  `webhook_subscriptions/${tenantId}/${subscriptionId}`;

/** A subscription to insert; the caller encrypted its secret under the row's context. */
export interface NewWebhookSubscription {
  id: string;
  tenantId: string;
  url: string;
  events: string[];
  description: string | null;
  secret: SealedSecret;
}

async function insert(db: Knex, input: NewWebhookSubscription): Promise<WebhookSubscription> {
  const [row] = await db(TABLE)
    .insert({
      id: input.id,
      tenant_id: input.tenantId,
      url: input.url,
      events: input.events,
      description: input.description,
      secret_ciphertext: input.secret.ciphertext,
      secret_key_id: input.secret.keyId,
    })
    .returning(COLUMNS);
  return toSubscription(row as WebhookSubscriptionRow);
}

export class WebhookSubscriptionsStore {
  constructor(private readonly db: Knex) {}

  /** Inserts a subscription whose secret the caller already encrypted under `id`'s context. */
  async create(input: NewWebhookSubscription): Promise<WebhookSubscription> {
    return insert(this.db, input);
  }

  /**
   * Inserts a subscription unless its tenant already has `max` (disabled ones count: they
   * can be enabled again); null when over the limit. Creates of one tenant are serialised by
   * a lock on its tenant row, so two creates at `max - 1` cannot both pass. FOR NO KEY
   * UPDATE, not FOR UPDATE: the foreign-key checks of other inserts that reference the
   * tenant (calls, events, keys) take KEY SHARE locks, which this does not block.
   */
  async createWithinLimit(
    input: NewWebhookSubscription,
    max: number,
  ): Promise<WebhookSubscription | null> {
    return this.db.transaction(async (trx) => {
      await trx('tenants').where({ id: input.tenantId }).forNoKeyUpdate().first('id');
      const [counted] = await trx(TABLE).where({ tenant_id: input.tenantId }).count('* as n');
      if (Number(counted?.n ?? 0) >= max) return null;
      return insert(trx, input);
    });
  }

  /** The tenant's subscription, or undefined (another tenant's id is simply not found). */
  async get(tenantId: string, id: string): Promise<WebhookSubscription | undefined> {
    const row = (await this.db(TABLE)
      .select(COLUMNS)
      .where({ tenant_id: tenantId, id })
      .first()) as WebhookSubscriptionRow | undefined;
    return row && toSubscription(row);
  }

  /**
   * The tenant's subscriptions, newest first: (created_at DESC, id DESC); only those of
   * `only` when given (a portal session limited to some subscriptions).
   */
  async list(
    tenantId: string,
    page: { limit: number; after?: KeysetPosition | null },
    only: readonly string[] | null = null,
  ): Promise<KeysetPage<WebhookSubscription>> {
    const query = this.db<WebhookSubscriptionRow>(TABLE)
      .select(COLUMNS)
      .where({ tenant_id: tenantId });
    if (only) void query.whereIn('id', [...only]);
    const result = await keysetPage<WebhookSubscriptionRow>(query, {
      timeColumn: 'created_at',
      idColumn: 'id',
      ...page,
      position: (r) => ({ t: r.created_at.getTime(), id: r.id }),
    });
    return { rows: result.rows.map(toSubscription), next: result.next };
  }

  /** Hard delete: the row and its secret are gone. False when there was no such row. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    const count = await this.db(TABLE).where({ tenant_id: tenantId, id }).delete();
    return count > 0;
  }

  /** Re-activates a subscription and zeroes its failure counter; undefined if not found. */
  async enable(tenantId: string, id: string): Promise<WebhookSubscription | undefined> {
    const [row] = await this.db(TABLE)
      .where({ tenant_id: tenantId, id })
      .update({
        is_active: true,
        consecutive_failures: 0,
        disabled_at: null,
        disabled_reason: null,
        updated_at: this.db.fn.now(),
      })
      .returning(COLUMNS);
    return row ? toSubscription(row as WebhookSubscriptionRow) : undefined;
  }

  /**
   * The encrypted signing secret, for the code that signs deliveries and nothing else.
   * Decrypt it with {@link webhookSecretContext}(tenantId, id).
   */
  async getSecretCiphertext(tenantId: string, id: string): Promise<SealedSecret | undefined> {
    const row = (await this.db(TABLE)
      .select('secret_ciphertext', 'secret_key_id')
      .where({ tenant_id: tenantId, id })
      .first()) as { secret_ciphertext: string; secret_key_id: string } | undefined;
    return row && { ciphertext: row.secret_ciphertext, keyId: row.secret_key_id };
  }
}
