import type { FromSchema } from 'json-schema-to-ts';
import { defineJob } from './job-definition';

// Payload schemas. Payloads are versioned (`v`) and carry ids only, never secrets or bodies:
// processors reload the rows from Postgres, where the truth is, and return early when a row
// is gone or already final.

/**
 * The trace a job continues (W3C traceparent). A job defined with `carriesTrace` gets the
 * span active where it is added, filled in by `spec` when tracing is on (./job-definition.ts);
 * the worker runs a job that has one in a span of that trace (apps/worker, queue-worker.ts).
 * Absent when tracing is off, when no span was active (a reconciler's job), and in jobs made
 * before it existed.
 */
const traceparentSchema = { type: 'string', maxLength: 200 } as const;

const deliveryJobSchema = {
  type: 'object',
  required: ['v', 'deliveryId', 'round', 'attempt'],
  properties: {
    v: { const: 1 },
    deliveryId: { type: 'string', minLength: 1 },
    round: { type: 'integer', minimum: 1 },
    // The attempt this job performs (1-based within the round).
    attempt: { type: 'integer', minimum: 1 },
    // Earlier claims of this attempt that recorded no outcome, when the job was made (absent
    // = 0). Part of the job id: the job that re-tries a claim left by a dead worker gets an
    // id of its own, instead of being a no-op beside the dead worker's job, which BullMQ
    // would only free after its stalled check.
    claims: { type: 'integer', minimum: 0 },
    // Made to recover an attempt a dead worker may have had in flight (the reconciler's re-add
    // of a lost or freed job, an event job's re-run): it goes before the lane's backlog, and
    // claims its row (a taken attempt's recovery is counted, as a lapsed claim's is).
    recovered: { const: true },
    // The delivery's tenant and target (subscription id, or receptionist id for a legacy
    // webhook_url): the lanes whose in-flight caps it counts toward. Absent in jobs made
    // without them (the processor then reads the delivery row).
    tenantId: { type: 'string', minLength: 1 },
    targetId: { type: 'string', minLength: 1 },
  },
  additionalProperties: false,
} as const;
export type DeliveryJob = FromSchema<typeof deliveryJobSchema>;

/**
 * The X-Request-Id of the API request that made a job (docs/API.md, Errors): the worker's
 * lines about the job carry it as `request_id`. Absent in jobs made by the worker itself
 * (reconcilers, schedules) and in jobs made before it existed.
 */
const requestIdSchema = { type: 'string', pattern: '^[\\w.:-]{1,128}$' } as const;

const outboundCallJobSchema = {
  type: 'object',
  required: ['v', 'callId'],
  properties: {
    v: { const: 1 },
    callId: { type: 'string', minLength: 1 },
    traceparent: traceparentSchema,
    requestId: requestIdSchema,
  },
  additionalProperties: false,
} as const;
export type OutboundCallJob = FromSchema<typeof outboundCallJobSchema>;

const provisioningJobSchema = {
  type: 'object',
  required: ['v', 'receptionistId', 'round', 'attempt'],
  properties: {
    v: { const: 1 },
    receptionistId: { type: 'string', minLength: 1 },
    // The provisioning round (POST /receptionists/{id}/provision starts the next one).
    round: { type: 'integer', minimum: 1 },
    // The attempt of that round this job performs (1-based).
    attempt: { type: 'integer', minimum: 1 },
    traceparent: traceparentSchema,
  },
  additionalProperties: false,
} as const;
export type ProvisioningJob = FromSchema<typeof provisioningJobSchema>;

const smsJobSchema = {
  type: 'object',
  required: ['v', 'smsId'],
  properties: {
    v: { const: 1 },
    smsId: { type: 'string', minLength: 1 },
    traceparent: traceparentSchema,
    requestId: requestIdSchema,
  },
  additionalProperties: false,
} as const;
export type SmsJob = FromSchema<typeof smsJobSchema>;

const smsReceiptJobSchema = {
  type: 'object',
  required: ['v', 'smsId', 'receptionistId', 'status'],
  properties: {
    v: { const: 1 },
    smsId: { type: 'string', minLength: 1 },
    // The simulated carrier's own record of the message: whose number sent it and what its
    // receipt will say (the carrier does not read Switchboard's database).
    receptionistId: { type: 'string', minLength: 1 },
    status: { enum: ['delivered', 'undelivered'] },
  },
  additionalProperties: false,
} as const;
export type SmsReceiptJob = FromSchema<typeof smsReceiptJobSchema>;

const leadImportJobSchema = {
  type: 'object',
  required: ['v', 'importId'],
  properties: {
    v: { const: 1 },
    importId: { type: 'string', minLength: 1 },
    traceparent: traceparentSchema,
  },
  additionalProperties: false,
} as const;
export type LeadImportJob = FromSchema<typeof leadImportJobSchema>;

const campaignJobSchema = {
  type: 'object',
  required: ['v', 'campaignId'],
  properties: {
    v: { const: 1 },
    campaignId: { type: 'string', minLength: 1 },
    traceparent: traceparentSchema,
  },
  additionalProperties: false,
} as const;
export type CampaignJob = FromSchema<typeof campaignJobSchema>;

const testDataDeletionJobSchema = {
  type: 'object',
  required: ['v', 'deletionId'],
  properties: { v: { const: 1 }, deletionId: { type: 'string', minLength: 1 } },
  additionalProperties: false,
} as const;
export type TestDataDeletionJob = FromSchema<typeof testDataDeletionJobSchema>;

/**
 * The job catalog: every queue of Switchboard and the one kind of job it carries, with its
 * payload schema, job id rule and options. Nothing outside the catalog spells a queue name, a
 * job name or a job id. Queue names are data in Redis: never rename one, or jobs queued under
 * the old name strand. Job ids are deterministic (re-adding an existing job is a no-op).
 */
export const catalog = {
  /**
   * One job per claim generation of a delivery attempt; the id names the round, the attempt
   * it performs and, after a claim that recorded nothing, the generation (`-cN`).
   */
  deliveries: defineJob<DeliveryJob>({
    queue: 'deliveries',
    name: 'delivery',
    schema: deliveryJobSchema,
    jobId: (d) => `${d.deliveryId}-r${d.round}-a${d.attempt}${d.claims ? `-c${d.claims}` : ''}`,
    // A job of a dead worker that had not claimed its row yet is back within 7 s, as a
    // recovery. A claimed attempt
    // comes back through its claim instead (the reconciler re-adds it, under a new id, once
    // the claim lapses: WEBHOOK_TIMEOUT_MS + 3 s after the claim, see deliver.ts).
    timings: { lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
    // Tenants take turns (./fair.ts): one tenant's parked, re-woken or retried jobs never
    // queue in front of another tenant's. A job made without its tenant has a group of its own.
    fairGroup: (d) => d.tenantId ?? '',
  }),
  /** One job per queued outbound call: dial it (at most once, by the dialler's claim). */
  outboundCalls: defineJob<OutboundCallJob>({
    queue: 'outbound-calls',
    name: 'dial',
    schema: outboundCallJobSchema,
    jobId: (d) => d.callId,
    // A dial is claimed in Postgres (at most once); the job only needs to come back soon.
    timings: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
    carriesTrace: true,
  }),
  /** One job per provisioning attempt of a receptionist (buy a number, create the assistant). */
  provisioning: defineJob<ProvisioningJob>({
    queue: 'provisioning',
    name: 'provision',
    schema: provisioningJobSchema,
    jobId: (d) => `${d.receptionistId}-r${d.round}-a${d.attempt}`,
    // Guarded by the provisioning lease; back within 15 s, then waits for the lease.
    timings: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
    carriesTrace: true,
  }),
  /** One job per queued outbound SMS: hand it to the provider (at most once, by the claim). */
  sms: defineJob<SmsJob>({
    queue: 'sms',
    name: 'send',
    schema: smsJobSchema,
    jobId: (d) => d.smsId,
    // A text is claimed before the hand-off (at most once); an unclaimed one is back in 15 s.
    timings: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
    carriesTrace: true,
  }),
  /**
   * The built-in SMS simulator only: one delayed job per message its carrier accepted, due
   * when the carrier reports the delivery receipt; applied through telephony ingestion. In
   * Redis rather than a timer, so a receipt outlives the worker that sent the message.
   */
  smsSimulatorReceipts: defineJob<SmsReceiptJob>({
    queue: 'sms-simulator-receipts',
    name: 'receipt',
    schema: smsReceiptJobSchema,
    jobId: (d) => d.smsId,
    // Applying a receipt is idempotent (its ingestion id): a stalled one is simply re-run.
    timings: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
  }),
  /** One job per CSV import: import it in batches, resuming after the last committed one. */
  leadImports: defineJob<LeadImportJob>({
    queue: 'lead-imports',
    name: 'import',
    schema: leadImportJobSchema,
    jobId: (d) => d.importId,
    // Long jobs (one per file) that resume after their last committed batch: back within
    // 5 s (lock) + 2 s (check). A lock lost under a live worker only runs a second copy,
    // which commits nothing its cursor guard refuses (lead-imports/processor.ts).
    timings: { lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
    carriesTrace: true,
  }),
  /**
   * One job per accepted campaign: start it (queued → running) and begin sending it at once.
   * Sending is not a job: every worker sends every running campaign (docs/API.md, Campaigns).
   */
  campaigns: defineJob<CampaignJob>({
    queue: 'campaigns',
    name: 'start',
    schema: campaignJobSchema,
    jobId: (d) => d.campaignId,
    // Only starts a campaign (sending is not a job): back in 15 s, or started by a tick.
    timings: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
    carriesTrace: true,
  }),
  /** One job per DELETE /test-data: wipe the tenant's test-mode data, then emit the event. */
  testDataDeletions: defineJob<TestDataDeletionJob>({
    queue: 'test-data-deletions',
    name: 'wipe',
    schema: testDataDeletionJobSchema,
    jobId: (d) => d.deletionId,
    // One transaction that completes the row: a re-run finds it completed and does nothing.
    timings: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
  }),
};

export type Catalog = typeof catalog;
export type CatalogKey = keyof Catalog;
