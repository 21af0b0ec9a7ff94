import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { newestFirst, type KeysetPage, type PageRequest } from '../keyset';
import { explainMiss, whereVersion, type VersionCondition } from '../versions';

const TABLE = 'webhook_subscriptions';

/** Why a subscription was turned off; null while it is active or was never disabled. */
export type WebhookDisabledReason = 'consecutive_failures' | 'manual';

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
  /**
   * Active, and the current streak of failures has reached half the disable threshold
   * (webhook.failing was sent for it); false again at the next success or when re-enabled.
   */
  failing: boolean;
  createdAt: Date;
  updatedAt: Date;
  disabledAt: Date | null;
  disabledReason: WebhookDisabledReason | null;
  lastDeliveryAt: Date | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  /** Attempts per second across every worker; null = unlimited. */
  rateLimitPerSecond: number | null;
  /** While set and in the future, deliveries are signed with the previous secret too. */
  secretOverlapEndsAt: Date | null;
  /** Counts the changes made by its PATCHes (and enables): its ETag, `W/"<version>"`. */
  version: number;
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
  failing_level: number;
  created_at: Date;
  updated_at: Date;
  disabled_at: Date | null;
  disabled_reason: WebhookDisabledReason | null;
  last_delivery_at: Date | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  rate_limit_per_second: number | null;
  secret_overlap_ends_at: Date | null;
  version: number;
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
  'failing_level',
  'created_at',
  'updated_at',
  'disabled_at',
  'disabled_reason',
  'last_delivery_at',
  'last_success_at',
  'last_failure_at',
  'rate_limit_per_second',
  'secret_overlap_ends_at',
  'version',
] as const;

const toSubscription = (r: WebhookSubscriptionRow): WebhookSubscription => ({
  id: r.id,
  tenantId: r.tenant_id,
  url: r.url,
  events: r.events,
  description: r.description,
  isActive: r.is_active,
  consecutiveFailures: r.consecutive_failures,
  // The level survives a re-enable (for webhook.recovered); the zeroed streak ends the state.
  failing: r.is_active && r.failing_level > 0 && r.consecutive_failures > 0,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
  lastDeliveryAt: r.last_delivery_at,
  lastSuccessAt: r.last_success_at,
  lastFailureAt: r.last_failure_at,
  rateLimitPerSecond: r.rate_limit_per_second,
  secretOverlapEndsAt: r.secret_overlap_ends_at,
  version: r.version,
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
  rateLimitPerSecond?: number | null;
  secret: SealedSecret;
  /** The request's Idempotency-Key and body fingerprint, stored as the key's backstop. */
  idempotency?: { key: string; fingerprint: string } | null;
}

/** What {@link WebhookSubscriptionsStore.createWithinLimit} did. */
export type CreateSubscriptionResult =
  | { kind: 'created'; subscription: WebhookSubscription }
  | { kind: 'limit_exceeded' }
  /** The key already holds a subscription: the caller replays it (or 422s on another body). */
  | { kind: 'existing'; subscription: WebhookSubscription; fingerprint: string | null };

/** The fields PATCH /webhooks/{id} may change; absent = unchanged. */
export interface WebhookSubscriptionPatch {
  url?: string;
  events?: string[];
  description?: string | null;
  isActive?: boolean;
  rateLimitPerSecond?: number | null;
}

async function insert(db: Knex, input: NewWebhookSubscription): Promise<WebhookSubscription> {
  const [row] = await db(TABLE)
    .insert({
      id: input.id,
      tenant_id: input.tenantId,
      url: input.url,
      events: input.events,
      description: input.description,
      rate_limit_per_second: input.rateLimitPerSecond ?? null,
      idempotency_key: input.idempotency?.key ?? null,
      idempotency_fingerprint: input.idempotency?.fingerprint ?? null,
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
   * can be enabled again). Creates of one tenant are serialised by a lock on its tenant row,
   * so two creates at `max - 1` cannot both pass, and two creates with one Idempotency-Key
   * cannot both insert (the second finds the first: `existing`). FOR NO KEY UPDATE, not FOR
   * UPDATE: the foreign-key checks of other inserts that reference the tenant (calls, events,
   * keys) take KEY SHARE locks, which this does not block.
   */
  async createWithinLimit(
    input: NewWebhookSubscription,
    max: number,
  ): Promise<CreateSubscriptionResult> {
    return this.db.transaction(async (trx) => {
      await trx('tenants').where({ id: input.tenantId }).forNoKeyUpdate().first('id');
      if (input.idempotency) {
        const held = (await trx(TABLE)
          .select([...COLUMNS, 'idempotency_fingerprint'])
          .where({ tenant_id: input.tenantId, idempotency_key: input.idempotency.key })
          .first()) as (WebhookSubscriptionRow & { idempotency_fingerprint: string }) | undefined;
        if (held) {
          return {
            kind: 'existing',
            subscription: toSubscription(held),
            fingerprint: held.idempotency_fingerprint,
          };
        }
      }
      const [counted] = await trx(TABLE).where({ tenant_id: input.tenantId }).count('* as n');
      if (Number(counted?.n ?? 0) >= max) return { kind: 'limit_exceeded' };
      return { kind: 'created', subscription: await insert(trx, input) };
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
    page: PageRequest,
    only: readonly string[] | null = null,
  ): Promise<KeysetPage<WebhookSubscription>> {
    const query = this.db<WebhookSubscriptionRow>(TABLE)
      .select(COLUMNS)
      .where({ tenant_id: tenantId });
    if (only) void query.whereIn('id', [...only]);
    return newestFirst(query, page, toSubscription, { time: 'created_at' });
  }

  /**
   * Hard delete: the row, its secret and its deliveries are gone. False when there was no
   * such row; VersionMismatch when its version is not one `condition` accepts. The
   * deliveries go in the same transaction, after the row: no foreign key does it (migration
   * 090). A fan-out that read the subscription before this commits may still add a delivery
   * after it: that one is canceled at its claim, never sent.
   */
  async delete(tenantId: string, id: string, condition: VersionCondition = null): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      const where = { tenant_id: tenantId, id };
      const count = await whereVersion(trx(TABLE).where(where), condition).delete();
      if (count === 0) {
        await explainMiss(trx, TABLE, where, condition);
        return false;
      }
      await trx('webhook_deliveries').where({ subscription_id: id }).delete();
      return true;
    });
  }

  /** Re-activates a subscription and zeroes its failure counter; undefined if not found. */
  async enable(tenantId: string, id: string): Promise<WebhookSubscription | undefined> {
    return this.update(this.db, tenantId, id, { isActive: true });
  }

  /**
   * Applies a PATCH. `isActive: false` pauses (reason `manual`; a subscription disabled
   * already keeps its reason and time); `isActive: true` enables and zeroes the failure
   * counter. The failing level stays: the next success then sends webhook.recovered, as for
   * any subscription that sent webhook.failing. Counts one more version. Undefined if not
   * found; VersionMismatch when its version is not one `condition` accepts.
   */
  async update(
    db: Knex,
    tenantId: string,
    id: string,
    patch: WebhookSubscriptionPatch,
    condition: VersionCondition = null,
  ): Promise<WebhookSubscription | undefined> {
    const raw = db.raw.bind(db);
    const set: Record<string, unknown> = { updated_at: db.fn.now(), version: raw('version + 1') };
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.events !== undefined) set.events = patch.events;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.rateLimitPerSecond !== undefined) {
      set.rate_limit_per_second = patch.rateLimitPerSecond;
    }
    if (patch.isActive === true) {
      Object.assign(set, {
        is_active: true,
        consecutive_failures: 0,
        disabled_at: null,
        disabled_reason: null,
      });
    } else if (patch.isActive === false) {
      Object.assign(set, {
        is_active: false,
        disabled_at: raw('CASE WHEN is_active THEN now() ELSE disabled_at END'),
        disabled_reason: raw("CASE WHEN is_active THEN 'manual' ELSE disabled_reason END"),
      });
    }
    const where = { tenant_id: tenantId, id };
    const [row] = await whereVersion(db(TABLE).where(where), condition)
      .update(set)
      .returning(COLUMNS);
    if (!row) await explainMiss(db, TABLE, where, condition);
    return row ? toSubscription(row as WebhookSubscriptionRow) : undefined;
  }

  /**
   * Whether the tenant's subscription is active, its row locked (FOR NO KEY UPDATE) for the
   * rest of the caller's transaction; undefined when not found.
   */
  async lockActive(trx: Knex, tenantId: string, id: string): Promise<boolean | undefined> {
    const row = (await trx(TABLE)
      .where({ tenant_id: tenantId, id })
      .forNoKeyUpdate()
      .first('is_active')) as { is_active: boolean } | undefined;
    return row?.is_active;
  }

  /**
   * Replaces the secret. The current one becomes the previous one until `overlapEndsAt`
   * (null = dropped now); a previous secret still in its overlap is dropped at once, so a
   * subscription never has more than two.
   */
  async rotateSecret(
    tenantId: string,
    id: string,
    fresh: SealedSecret,
    overlapEndsAt: Date | null,
  ): Promise<WebhookSubscription | undefined> {
    const keep = overlapEndsAt !== null;
    const [row] = await this.db(TABLE)
      .where({ tenant_id: tenantId, id })
      .update({
        previous_secret_ciphertext: keep ? this.db.ref('secret_ciphertext') : null,
        previous_secret_key_id: keep ? this.db.ref('secret_key_id') : null,
        secret_overlap_ends_at: overlapEndsAt,
        secret_ciphertext: fresh.ciphertext,
        secret_key_id: fresh.keyId,
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
