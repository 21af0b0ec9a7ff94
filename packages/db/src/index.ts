/** Postgres access: the knex factory, migrations, ids, keyset pagination and one store per table. */
export { createKnex, type DatabaseSettings, type Knex } from './knex';
export { Batcher, oneBatchInFlight, type BatcherOptions } from './batcher';
export { isTransientDbError } from './errors';
export { accepts, requireVersion, VersionMismatch, type VersionCondition } from './versions';
export { toPgText } from './text';
export { migrateLatest } from './migrate';
export {
  afterIdTimeSql,
  idTimeBoundsSql,
  idTimeWindow,
  newId,
  newTimeOrderedId,
  newTimeOrderedIdSql,
  timeOfId,
  widenTimeWindow,
  type IdPrefix,
  type TimeWindow,
  type TimeOrderedPrefix,
} from './ids';
export { compareKeyset, keysetPage, type KeysetPage, type KeysetPosition } from './keyset';
export { createStores, type Db, type Stores } from './stores/create-stores';
export * from './stores/tenants-store';
export * from './stores/api-keys-store';
export * from './listen';
export * from './stores/api-key-changes';
export * from './stores/receptionists-store';
export * from './stores/provisioning-lifecycle';
export * from './stores/usage-store';
export { listCallsStatement } from './stores/calls-list';
export * from './stores/events-store';
export * from './stores/event-log-store';
export * from './stores/event-streams-store';
export * from './stores/event-stream-notify';
export * from './stores/call-types';
export { bookingSchema } from './stores/booking';
export * from './stores/calls-store';
export * from './stores/call-lifecycle';
export * from './stores/telephony-messages-store';
export * from './stores/sms-types';
export * from './stores/sms-store';
export * from './stores/sms-lifecycle';
export * from './stores/sms-opt-outs-store';
export * from './stores/webhook-subscriptions-store';
export {
  SubscriptionLifecycle,
  type WebhookSubscriptionPatch,
} from './stores/subscription-lifecycle';
export * from './stores/webhook-recoveries-store';
export { SUBSCRIPTION_EVENT_TYPES } from './stores/operational-events-sql';
export {
  DeliveriesStore,
  FINAL_DELIVERY_STATUSES,
  type AttemptOutcome,
  type Delivery,
  type DeliveryFilter,
  type DeliveryStatus,
} from './stores/deliveries-store';
export * from './stores/delivery-attempts-store';
export * from './stores/delivery-lifecycle';
export * from './stores/leads-store';
export { LEAD_SOURCES, LEAD_STATUSES } from './stores/lead-rows';
export * from './stores/lead-imports-store';
export * from './stores/lead-import-lifecycle';
export * from './stores/test-data-deletion-lifecycle';
export * from './stores/campaigns-store';
export * from './stores/campaign-recipients-store';
export * from './stores/campaign-lifecycle';
export { explainDatabaseError, redactUrl } from './connection-error';
export * from './stores/tenant-retention-store';
export * from './partitions';
export * from './stores/portal-sessions-store';
export * from './stores/webhook-stats-store';
