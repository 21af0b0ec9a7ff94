import type { IncomingMessage, OutgoingHttpHeaders, RequestListener } from 'node:http';
import proxyaddr from 'proxy-addr';
import { hashApiKey } from '@switchboard/db';
import type { AnonymousLimits } from './anonymous-limit';
import { errorBody } from './error-handler';
import type { Lifecycle } from './lifecycle';
import type { RefusalLog } from './refusal-log';
import { requestIdOf } from './request-id';

/** A route whose requests without a valid credential take a token of their address's bucket. */
export interface GuardedRoute {
  /** Upper case; a GET route guards HEAD too (Express answers HEAD with it). */
  method: string;
  /** Its full path template, mount point included (`/api/v1/calls/:id`). */
  path: string;
  /** Whether `header` (the Authorization field) is a credential the route takes unlimited. */
  accepts: (header: string | undefined) => boolean;
}

const BEARER = /^Bearer ([A-Za-z0-9_]{8,200})$/;

/** An API key this process has seen valid lately: its requests never wait on the bucket. */
export const knownApiKey =
  (anonymous: AnonymousLimits) =>
  (header: string | undefined): boolean => {
    const presented = header ? BEARER.exec(header)?.[1] : undefined;
    return presented !== undefined && anonymous.isKnown(hashApiKey(presented));
  };

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The path template as Express matches it by default: `:name` is one non-empty segment,
 * case-insensitive, an optional trailing slash.
 */
function templateRegExp(path: string): RegExp {
  const source = path
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : escape(part)))
    .join('/');
  return new RegExp(`^${source}/?$`, 'i');
}

type Guard = { re: RegExp; accepts: GuardedRoute['accepts'] };

function guardsByMethod(routes: readonly GuardedRoute[]): Map<string, Guard[]> {
  const byMethod = new Map<string, Guard[]>();
  for (const route of routes) {
    const methods = route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];
    for (const method of methods) {
      const list = byMethod.get(method) ?? [];
      list.push({ re: templateRegExp(route.path), accepts: route.accepts });
      byMethod.set(method, list);
    }
  }
  return byMethod;
}

/**
 * The path of a request-target in origin form (`/calls?x=1` → `/calls`). A target the
 * router would read otherwise (absolute form, a `#`) matches no guard here, so it goes on
 * to the app, whose route refuses it the same way (AnonymousLimits.count): never a
 * refusal the app would not give.
 */
function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

export interface EarlyRefusalOptions {
  anonymous: AnonymousLimits;
  routes: readonly GuardedRoute[];
  /**
   * Express's compiled TRUST_PROXY (the app's `trust proxy fn`): the client address is
   * `proxyaddr(req, trust)`, the very computation behind `req.ip`, so the address refused
   * here is the one the limit counted.
   */
  trust: (address: string, hop: number) => boolean;
  /** Counts a refusal in the request metrics (metrics/middleware.ts, refusalMetrics). */
  counted: (method: string | undefined, seconds: number) => void;
  log: RefusalLog;
  lifecycle: Lifecycle;
}

const CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The early refusal (docs/API.md, Rate limits), the HTTP server's request listener in front
 * of `app`: while an address's bucket of requests without a valid credential is known to be
 * empty (AnonymousLimits.refusal: Redis refused it and its Retry-After has not passed), a
 * request from it to a guarded route, without a credential the route takes unlimited, is
 * answered its 429 here and never reaches Express (no request and response set-up, router,
 * middleware, tracing, body parsing, Redis or Postgres), so a flood of made-up credentials
 * cannot crowd out other tenants' requests. Every other request goes to `app` unchanged,
 * after one address computation and one map read.
 *
 * The answer is the app's own for that request (the same body through `errorBody`, the
 * limit's RateLimit fields and Retry-After, X-Request-Id, `Connection: close` unless the
 * peer is a proxy TRUST_PROXY trusts, or the process is stopping), counted in the request
 * metrics as the app would count it (route `unmatched`: no routing ran) and summed in the
 * refusal log rather than logged one line each. It is written in the turn the request
 * arrives: no timer, no closure, no listener per request; an unread body is dropped by Node
 * once the answer is finished. A held answer (a tarpit) was tried and removed
 * (docs/decisions/0105-floods-cost-other-tenants-nothing.md): every held answer is an open
 * connection, and a flood tool that opens another when its answers are slow holds thousands.
 * What is held instead is the client's next connection, unread and within the connection
 * cap, until its Retry-After (docs/decisions/0121-a-refused-clients-next-connection-waits.md).
 */
export function earlyRefusal(app: RequestListener, options: EarlyRefusalOptions): RequestListener {
  const { anonymous, trust, counted, log, lifecycle } = options;
  const byMethod = guardsByMethod(options.routes);
  const guarded = (req: IncomingMessage): boolean => {
    const guards = req.method === undefined ? undefined : byMethod.get(req.method);
    if (guards === undefined) return false;
    const path = pathOf(req.url);
    for (const guard of guards) {
      if (guard.re.test(path)) return !guard.accepts(req.headers.authorization);
    }
    return false;
  };
  return (req, res) => {
    const address = proxyaddr(req, trust) ?? 'unknown';
    const refusal = anonymous.refusal(address);
    if (refusal === undefined || !guarded(req)) {
      app(req, res);
      return;
    }
    const start = process.hrtime.bigint();
    const requestId = requestIdOf(req.headers['x-request-id']);
    const body = JSON.stringify(errorBody(refusal, requestId));
    const headers: OutgoingHttpHeaders = {
      ...refusal.headers,
      'X-Request-Id': requestId,
      'Content-Type': CONTENT_TYPE,
      'Content-Length': Buffer.byteLength(body),
    };
    // The client itself is the peer: it pays a new connection for its next request
    // (AnonymousLimits' closingFor), and that connection is not read before the Retry-After
    // it was told (./held-connections.ts). A trusted proxy's connection carries other clients.
    if (address === req.socket.remoteAddress) {
      headers.Connection = 'close';
      anonymous.told(address);
    } else if (lifecycle.isStopping) {
      headers.Connection = 'close';
    }
    res.writeHead(refusal.status, headers);
    res.end(body);
    counted(req.method, Number(process.hrtime.bigint() - start) / 1e9);
    log.count(address);
  };
}
