/**
 * Friendly names for the generated types (`./generated/openapi.ts`, made from the API's
 * OpenAPI document by `npm run sdk:generate`). Nothing here is written by hand but the names.
 */
import type { components, operations, webhooks } from './generated/openapi';

type Schemas = components['schemas'];

export type ApiErrorBody = Schemas['Error'];
export type Receptionist = Schemas['Receptionist'];
export type ReceptionistCreate = Schemas['ReceptionistCreate'];
export type ReceptionistUpdate = Schemas['ReceptionistUpdate'];
export type Call = Schemas['Call'];
export type CallDetail = Schemas['CallDetail'];
export type CallList = Schemas['CallList'];
export type OutboundCallRequest = Schemas['OutboundCallRequest'];
export type QueuedOutboundCall = Schemas['QueuedOutboundCall'];
export type WebhookSubscription = Schemas['WebhookSubscription'];
export type WebhookSubscriptionCreate = Schemas['WebhookSubscriptionCreate'];
export type CreatedWebhookSubscription = Schemas['CreatedWebhookSubscription'];
export type WebhookTestResult = Schemas['WebhookTestResult'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookSubscriptionPatch = Schemas['WebhookSubscriptionPatch'];
export type WebhookSecretRotation = Schemas['WebhookSecretRotation'];
export type WebhookRotatedSecret = Schemas['WebhookRotatedSecret'];
export type WebhookDeliveryDetail = Schemas['WebhookDeliveryDetail'];
export type EventTypeList = Schemas['EventTypeList'];
export type EventTypeInfo = Schemas['EventType'];
/** A stored event, as its webhook carries it (GET /events): discriminated by `event`. */
export type Event = Schemas['Event'];
export type WebhookRecovery = Schemas['WebhookRecovery'];
export type WebhookRecoveryRequest = Schemas['WebhookRecoveryRequest'];
export type WebhookStats = Schemas['WebhookStats'];
export type PortalSession = Schemas['PortalSession'];
export type PortalSessionCreate = Schemas['PortalSessionCreate'];
export type PortalToken = Schemas['PortalToken'];
export type LivePortalSession = Schemas['LivePortalSession'];
export type PortalSessionsRevoked = Schemas['PortalSessionsRevoked'];
export type Usage = Schemas['Usage'];
export type TestDataDeletion = Schemas['TestDataDeletion'];
export type Sms = Schemas['Sms'];
export type SmsSendRequest = Schemas['SmsSendRequest'];
export type SmsOptOut = Schemas['SmsOptOut'];
export type Lead = Schemas['Lead'];
export type LeadCreate = RequestBodyOf<'createLead'>;
export type LeadUpdate = RequestBodyOf<'updateLead'>;
export type LeadImport = Schemas['LeadImport'];

/** An operation of the API, by its operationId. */
export type OperationId = keyof operations;

/** The query parameters of an operation (all optional ones stay optional). */
export type QueryOf<K extends OperationId> = operations[K] extends {
  parameters: { query?: infer Q };
}
  ? NonNullable<Q>
  : never;

/** The JSON request body of an operation (for bodies the document does not name). */
export type RequestBodyOf<K extends OperationId> = operations[K] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/** List parameters: the operation's query without `cursor`, which the iterator manages. */
export type ListParams<K extends OperationId> = Omit<QueryOf<K>, 'cursor'> & {
  /** Start from this cursor instead of the first page. */
  cursor?: string;
};

type EnvelopeOf<W> = W extends {
  post: { requestBody?: { content: { 'application/json': infer B } } };
}
  ? B
  : never;

/** Every event a subscription can receive, discriminated by `event`. */
export type WebhookEvent = { [K in keyof webhooks]: EnvelopeOf<webhooks[K]> }[keyof webhooks];
/** The name of every event type, e.g. `call.completed`. */
export type WebhookEventType = WebhookEvent['event'];
/** The envelope of one event type: `WebhookEventOf<'call.completed'>['data']['outcome']`. */
export type WebhookEventOf<E extends WebhookEventType> = Extract<WebhookEvent, { event: E }>;

export type { components, operations, paths, webhooks } from './generated/openapi';
