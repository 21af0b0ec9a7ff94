import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Labels of the request series: each has a small, fixed set of values (see middleware.ts). */
type HttpLabels = 'method' | 'route' | 'status_class';
/** The count also carries the exact status (one of ANSWERED_STATUSES or `other`). */
type RequestLabels = HttpLabels | 'status';

/**
 * The API's Prometheus metrics, on a registry of its own (no global state). No label ever
 * holds a tenant, a key, an id or a raw path, so the number of series is bounded by the
 * routes the API declares, whatever the traffic.
 */
export interface ApiMetrics {
  registry: Registry;
  requests: Counter<RequestLabels>;
  requestDuration: Histogram<HttpLabels>;
  inFlight: Gauge;
  rateLimited: Counter<'route'>;
  connectionsRefused: Counter;
  connectionsHeld: Counter;
  idempotentReplays: Counter<'route'>;
  callsIngested: Counter<'type'>;
  smsReceived: Counter;
  outboundCallsAccepted: Counter;
  smsAccepted: Counter;
  leadsCreated: Counter;
  campaignsStarted: Counter;
  logLinesDropped: Counter;
  eventStreamReads: Counter<'read'>;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'switchboard_api_' });
  const counter = <L extends string = never>(name: string, help: string, labelNames?: L[]) =>
    new Counter<L>({ name, help, labelNames: labelNames ?? [], registers: [registry] });
  return {
    registry,
    requests: counter('switchboard_http_requests_total', 'HTTP requests answered', [
      'method',
      'route',
      'status_class',
      'status',
    ]),
    requestDuration: new Histogram({
      name: 'switchboard_http_request_duration_seconds',
      help: 'Time from a request reaching the app to its answer being written',
      labelNames: ['method', 'route', 'status_class'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'switchboard_http_requests_in_flight',
      help: 'HTTP requests being served now',
      registers: [registry],
    }),
    rateLimited: counter(
      'switchboard_http_rate_limited_total',
      'Requests refused with 429 by a rate limit',
      ['route'],
    ),
    connectionsRefused: counter(
      'switchboard_http_connections_refused_total',
      'Connections reset at once because their client address held API_MAX_CONNECTIONS_PER_IP already',
    ),
    connectionsHeld: counter(
      'switchboard_http_connections_held_total',
      'Connections left unread until the Retry-After their client address was told by a 429',
    ),
    idempotentReplays: counter(
      'switchboard_idempotent_replays_total',
      'Requests answered with the stored answer of an earlier one (Idempotent-Replayed: true)',
      ['route'],
    ),
    callsIngested: counter(
      'switchboard_calls_ingested_total',
      'Call messages of the voice platform accepted (202), by type',
      ['type'],
    ),
    smsReceived: counter(
      'switchboard_sms_received_total',
      'Inbound SMS of the voice platform accepted (202)',
    ),
    outboundCallsAccepted: counter(
      'switchboard_outbound_calls_accepted_total',
      'Outbound calls accepted (POST /calls/outbound, not replays)',
    ),
    smsAccepted: counter(
      'switchboard_sms_accepted_total',
      'SMS accepted for sending (POST /sms/send, not replays)',
    ),
    leadsCreated: counter(
      'switchboard_leads_created_total',
      'Leads created through POST /leads (not replays; imported rows are counted by the worker)',
    ),
    campaignsStarted: counter(
      'switchboard_campaigns_started_total',
      'Campaigns accepted for sending (POST /campaigns, not replays)',
    ),
    logLinesDropped: counter(
      'switchboard_log_lines_dropped_total',
      'Log lines dropped because stdout did not take them (more than 16 MiB held)',
    ),
    eventStreamReads: counter(
      'switchboard_event_stream_reads_total',
      'Reads of the event log by event streams: `shared` (one per tenant and mode, for every ' +
        'stream of it in this process), `catch_up` (one stream, from where it starts)',
      ['read'],
    ),
  };
}
