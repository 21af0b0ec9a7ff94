/**
 * Queue names. They are part of the data in Redis: never rename one, or jobs already queued
 * under the old name are stranded. Custom job ids must not contain ':'.
 */
export const QUEUES = {
  /** One job per outbox event: fan it out into deliveries. jobId = event id. */
  events: 'events',
  /** One job per delivery attempt series. jobId = delivery id. */
  deliveries: 'deliveries',
  /** One job per queued outbound call. jobId = call id. */
  outboundCalls: 'outbound-calls',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
