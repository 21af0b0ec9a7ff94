/**
 * A webhook subscription's row and its domain object, shared by the store (reads, create,
 * delete, secrets) and the lifecycle (every change of state). Row types stay in packages/db.
 */

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
  /** false: made by a test-mode key; it takes test-mode events only (docs/API.md, Test mode). */
  livemode: boolean;
}

export interface WebhookSubscriptionRow {
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
  livemode: boolean;
}

/** Every column except the secret ones: no ordinary read ever loads the ciphertext. */
export const SUBSCRIPTION_COLUMNS = [
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
  'livemode',
] as const;

export const toSubscription = (r: WebhookSubscriptionRow): WebhookSubscription => ({
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
  livemode: r.livemode,
});
