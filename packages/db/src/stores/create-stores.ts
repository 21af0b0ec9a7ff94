import type { Knex } from 'knex';
import { ApiKeysStore } from './api-keys-store';
import { CallLifecycle } from './call-lifecycle';
import { CallsStore } from './calls-store';
import { CampaignLifecycle } from './campaign-lifecycle';
import { CampaignRecipientsStore } from './campaign-recipients-store';
import { CampaignsStore } from './campaigns-store';
import { DeliveriesStore } from './deliveries-store';
import { DeliveryAttemptsStore } from './delivery-attempts-store';
import { DeliveryLifecycle } from './delivery-lifecycle';
import { EventLogStore } from './event-log-store';
import { EventsStore } from './events-store';
import { EventStreamsStore } from './event-streams-store';
import { LeadImportLifecycle } from './lead-import-lifecycle';
import { TestDataDeletionLifecycle } from './test-data-deletion-lifecycle';
import { LeadImportsStore } from './lead-imports-store';
import { LeadsStore } from './leads-store';
import { PortalSessionsStore } from './portal-sessions-store';
import { ProvisioningLifecycle } from './provisioning-lifecycle';
import { ReceptionistsStore } from './receptionists-store';
import { SmsLifecycle } from './sms-lifecycle';
import { SmsOptOutsStore } from './sms-opt-outs-store';
import { SmsStore } from './sms-store';
import { SubscriptionLifecycle } from './subscription-lifecycle';
import { TenantRetentionStore } from './tenant-retention-store';
import { TelephonyMessagesStore } from './telephony-messages-store';
import { TenantsStore } from './tenants-store';
import { UsageStore } from './usage-store';
import { WebhookRecoveriesStore } from './webhook-recoveries-store';
import { WebhookStatsStore } from './webhook-stats-store';
import { WebhookSubscriptionsStore } from './webhook-subscriptions-store';

/**
 * Every store and lifecycle of a process, each under one name, built once over the process's
 * pool. The one transaction idiom: a method that writes or reads inside a transaction takes
 * that transaction first (`(trx, …)`), and a method that may run either way takes the pool
 * or the transaction first (`(db, …)`), never defaulting to the pool; only a method that
 * always runs on its own (a list page, a standalone lookup) uses the pool the store was built
 * with. Nothing else constructs a store (the lint config refuses `new …Store(…)` elsewhere).
 */
export function createStores(
  knex: Knex,
  /** `cacheActiveKeys`: the API's key cache (ApiKeysStore, ACTIVE_KEY_TTL_MS). */
  options: { cacheActiveKeys?: boolean } = {},
) {
  const smsLifecycle = new SmsLifecycle();
  const deliveryLifecycle = new DeliveryLifecycle();
  const callLifecycle = new CallLifecycle();
  return {
    tenants: new TenantsStore(knex),
    tenantRetention: new TenantRetentionStore(knex),
    apiKeys: new ApiKeysStore(knex, { cacheActiveKeys: options.cacheActiveKeys === true }),
    portalSessions: new PortalSessionsStore(knex),
    receptionists: new ReceptionistsStore(knex),
    /** The provisioning lifecycle's statements (each takes the transaction first). */
    provisioningLifecycle: new ProvisioningLifecycle(),
    /** Usage counters per tenant and month. */
    usage: new UsageStore(knex),
    calls: new CallsStore(knex, callLifecycle),
    /** The call lifecycle's statements (each takes the transaction first). */
    callLifecycle,
    /** Ids of the telephony messages ingestion applied (replays are no-ops). */
    telephonyMessages: new TelephonyMessagesStore(),
    sms: new SmsStore(knex, smsLifecycle),
    /** The SMS lifecycle's statements (each takes the transaction first). */
    smsLifecycle,
    /** The per-tenant opt-out list. */
    smsOptOuts: new SmsOptOutsStore(knex),
    /** The event outbox. */
    events: new EventsStore(knex),
    /** The tenant's event log (reads by tenant: list, one event, streams). */
    eventLog: new EventLogStore(knex),
    /** Leases of open event streams (the per-key limit, the tenants that notify). */
    eventStreams: new EventStreamsStore(knex),
    webhookSubscriptions: new WebhookSubscriptionsStore(knex),
    /** The subscription lifecycle's statements (each takes the transaction first). */
    subscriptionLifecycle: new SubscriptionLifecycle(),
    webhookRecoveries: new WebhookRecoveriesStore(knex, deliveryLifecycle),
    /** Delivery health per subscription, aggregated in SQL. */
    webhookStats: new WebhookStatsStore(knex),
    /** The delivery log (read). */
    deliveries: new DeliveriesStore(knex),
    /** The delivery lifecycle's statements (each takes the transaction first). */
    deliveryLifecycle,
    deliveryAttempts: new DeliveryAttemptsStore(knex),
    leads: new LeadsStore(knex),
    leadImports: new LeadImportsStore(knex),
    /** The lead import lifecycle's statements (each takes the connection or transaction first). */
    leadImportLifecycle: new LeadImportLifecycle(),
    campaigns: new CampaignsStore(knex),
    campaignRecipients: new CampaignRecipientsStore(knex),
    /** The campaign lifecycle's statements (each takes the transaction first). */
    campaignLifecycle: new CampaignLifecycle(),
    /** Wipes of a tenant's test-mode data (DELETE /test-data): requests and their run. */
    testDataDeletions: new TestDataDeletionLifecycle(knex),
  };
}

export type Stores = ReturnType<typeof createStores>;

/** A process's pool and the stores built over it (the API's, worker's and CLI's deps). */
export interface Db {
  knex: Knex;
  stores: Stores;
}
