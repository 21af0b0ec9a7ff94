import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { newestFirst, type KeysetPage, type PageRequest } from '../keyset';
import { explainMiss, whereVersion, type VersionCondition } from '../versions';
import {
  SUBSCRIPTION_COLUMNS,
  toSubscription,
  type WebhookSubscription,
  type WebhookSubscriptionRow,
} from './webhook-subscription-rows';

export type { WebhookDisabledReason, WebhookSubscription } from './webhook-subscription-rows';

const TABLE = 'webhook_subscriptions';
const COLUMNS = SUBSCRIPTION_COLUMNS;

/** The encrypted signing secret of one subscription, as stored. */
export interface SealedSecret {
  ciphertext: string;
  keyId: string;
}

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
  /** false: made by a test-mode key (default: live). */
  livemode?: boolean;
}

/** What {@link WebhookSubscriptionsStore.createWithinLimit} did. */
export type CreateSubscriptionResult =
  | { kind: 'created'; subscription: WebhookSubscription }
  | { kind: 'limit_exceeded' }
  /** The key already holds a subscription: the caller replays it (or 422s on another body). */
  | { kind: 'existing'; subscription: WebhookSubscription; fingerprint: string | null };

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
      livemode: input.livemode ?? true,
    })
    .returning(COLUMNS);
  return toSubscription(row as WebhookSubscriptionRow);
}

/**
 * Subscriptions: create (active by the columns' defaults), reads, delete and secrets. Every
 * change of state (pause, enable, failing, disabled, recovered) is SubscriptionLifecycle's
 * (subscription-lifecycle.ts).
 */
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
   * The mode of the tenant's subscription `id` (true: live), or undefined when the tenant
   * has none such: what keeps a key to the subscriptions of its mode (docs/API.md, Test mode).
   */
  async modeOf(tenantId: string, id: string): Promise<boolean | undefined> {
    const row = (await this.db(TABLE)
      .select('livemode')
      .where({ tenant_id: tenantId, id })
      .first()) as { livemode: boolean } | undefined;
    return row?.livemode;
  }

  /**
   * The tenant's subscriptions of one mode (`livemode`), newest first: (created_at DESC, id
   * DESC); only those of `only` when given (a portal session limited to some subscriptions).
   */
  async list(
    tenantId: string,
    page: PageRequest,
    only: readonly string[] | null = null,
    livemode = true,
  ): Promise<KeysetPage<WebhookSubscription>> {
    const query = this.db<WebhookSubscriptionRow>(TABLE)
      .select(COLUMNS)
      .where({ tenant_id: tenantId, livemode });
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
