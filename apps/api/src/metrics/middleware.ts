import type { Request, RequestHandler, Response } from 'express';
import type { ApiMetrics } from './registry';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Every status the API answers with (routes, the error middleware, the portal's static files).
 * The `status` label holds one of these or `other`, so it stays bounded whatever a handler or
 * a library below it might send one day; a new status of the API belongs here.
 */
export const ANSWERED_STATUSES: ReadonlySet<number> = new Set([
  200, 201, 202, 204, 206, 301, 304, 400, 401, 403, 404, 405, 408, 409, 412, 413, 415, 416, 422,
  429, 431, 500, 503,
]);

export const statusLabel = (status: number): string =>
  ANSWERED_STATUSES.has(status) ? String(status) : 'other';

/** The routers' mount points; /v1 is the shorthand of /api/v1, so both count as /api/v1. */
const MOUNTS: ReadonlyArray<[string, string]> = [
  ['/api/v1/', '/api/v1'],
  ['/v1/', '/api/v1'],
  ['/internal/v1/', '/internal/v1'],
];

/** The route label of a request no route matched (a 404, or a request refused before routing). */
export const UNMATCHED = 'unmatched';

/**
 * The route template a request matched (`/api/v1/calls/:id`), never its raw path: a request
 * no route matched is `unmatched`, so random paths cannot grow the series.
 */
export function routeTemplate(req: Request): string {
  const declared = (req.route as { path?: unknown } | undefined)?.path;
  const path = Array.isArray(declared) ? declared[0] : declared;
  if (typeof path !== 'string') return UNMATCHED;
  const mount = MOUNTS.find(([prefix]) => req.originalUrl.startsWith(prefix));
  return mount ? `${mount[1]}${path}` : path;
}

/**
 * Business counters, keyed by the route that creates the thing; counted on a 2xx answer
 * that is not an idempotent replay (a replay created nothing).
 */
const BUSINESS: Record<string, (m: ApiMetrics, req: Request) => void> = {
  'POST /internal/v1/telephony/events': (m, req) => {
    const type = (req.body as { type?: unknown } | undefined)?.type;
    if (type === 'sms.inbound') m.smsReceived.inc();
    // A 2xx means the type was one of the catalog's (validated), so the label is bounded.
    else if (typeof type === 'string') m.callsIngested.inc({ type });
  },
  'POST /api/v1/calls/outbound': (m) => m.outboundCallsAccepted.inc(),
  'POST /api/v1/sms/send': (m) => m.smsAccepted.inc(),
  'POST /api/v1/leads': (m) => m.leadsCreated.inc(),
  'POST /api/v1/campaigns': (m) => m.campaignsStarted.inc(),
};

/** The request series of one (method, route, status): bound once, then reused. */
interface Series {
  requests: { inc(): void };
  duration: { observe(seconds: number): void };
}

const methodLabel = (method: string | undefined): string =>
  method !== undefined && METHODS.has(method) ? method : 'OTHER';

/** The request series of (method label, route, status), each bound on first use. */
function requestSeries(m: ApiMetrics): (method: string, route: string, status: number) => Series {
  const series = new Map<string, Series>();
  return (method, route, statusCode) => {
    const statusClass = `${Math.floor(statusCode / 100)}xx`;
    const status = statusLabel(statusCode);
    // Bounded: methods, statuses and classes are a few values, routes are the declared ones.
    const id = `${method} ${route} ${statusClass} ${status}`;
    let bound = series.get(id);
    if (!bound) {
      const labels = { method, route, status_class: statusClass };
      bound = {
        // The exact status only on the count: on the histogram it would multiply the buckets.
        requests: m.requests.labels({ ...labels, status }),
        duration: m.requestDuration.labels(labels),
      };
      series.set(id, bound);
    }
    return bound;
  };
}

function record(
  m: ApiMetrics,
  series: ReturnType<typeof requestSeries>,
  req: Request,
  res: Response,
  seconds: number,
): void {
  const route = routeTemplate(req);
  const method = methodLabel(req.method);
  const bound = series(method, route, res.statusCode);
  bound.requests.inc();
  bound.duration.observe(seconds);
  if (res.statusCode === 429) m.rateLimited.inc({ route });
  const replayed = res.getHeader('Idempotent-Replayed') === 'true';
  if (replayed) m.idempotentReplays.inc({ route });
  else if (res.statusCode >= 200 && res.statusCode < 300) {
    BUSINESS[`${method} ${route}`]?.(m, req);
  }
}

/** Counts and times every request, once, whether its answer finished or was cut off. */
export function httpMetrics(m: ApiMetrics): RequestHandler {
  const series = requestSeries(m);
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    m.inFlight.inc();
    // A ServerResponse always emits 'close' last (after 'finish' when the answer ended),
    // exactly once, whether the answer finished or was cut off.
    res.on('close', () => {
      m.inFlight.dec();
      record(m, series, req, res, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}

/**
 * Counts a 429 answered before the app (http/early-refusal.ts) in the series httpMetrics
 * would give it: routing never ran, so its route is `unmatched`, as it was when the refusal
 * was a middleware. Never in flight: it is answered in the turn it arrives.
 */
export function refusalMetrics(
  m: ApiMetrics,
): (method: string | undefined, seconds: number) => void {
  const series = requestSeries(m);
  const limited = m.rateLimited.labels({ route: UNMATCHED });
  return (method, seconds) => {
    const bound = series(methodLabel(method), UNMATCHED, 429);
    bound.requests.inc();
    bound.duration.observe(seconds);
    limited.inc();
  };
}
