import type { RequestHandler } from 'express';
import { hashApiKey } from '@switchboard/db';
import { clientAddress, closingFor, type AnonymousLimits } from './anonymous-limit';
import { renderError } from './error-handler';

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

/**
 * The early refusal (docs/API.md, Rate limits): while an address's bucket of requests
 * without a valid credential is known to be empty (AnonymousLimits.refusal: Redis refused it
 * and its Retry-After has not passed), a request from it to a guarded route, without a
 * credential the route takes unlimited, is answered its 429 here, before tracing, logging,
 * routing, body parsing, Redis or Postgres: the answer the route would give, for a fraction
 * of its cost, so a flood of made-up credentials cannot crowd out other tenants' requests.
 * Every other request, and every request of an address with tokens, goes on unchanged (the
 * address lookup is one map read). Mounted after the request id and the metrics, so a
 * refused request still has its X-Request-Id and is counted.
 *
 * The 429 is written at once, in the turn the request arrives: no timer, no Redis; its
 * connection is closed after it (`Connection: close`) unless the peer is a trusted proxy.
 * A held refusal (a tarpit) was tried and removed (docs/decisions/0105-floods-cost-other-tenants-nothing.md): every held answer is an open connection, and a flood tool that opens
 * another connection when its answers are slow then holds thousands of them.
 */
export function earlyRefusal(
  anonymous: AnonymousLimits,
  routes: readonly GuardedRoute[],
): RequestHandler {
  const byMethod = new Map<string, Array<{ re: RegExp; accepts: GuardedRoute['accepts'] }>>();
  for (const route of routes) {
    const methods = route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];
    for (const method of methods) {
      const list = byMethod.get(method) ?? [];
      list.push({ re: templateRegExp(route.path), accepts: route.accepts });
      byMethod.set(method, list);
    }
  }
  return (req, res, next) => {
    const refusal = anonymous.refusal(clientAddress(req));
    if (!refusal) {
      next();
      return;
    }
    const path = req.path;
    const route = byMethod.get(req.method)?.find((r) => r.re.test(path));
    if (!route || route.accepts(req.headers.authorization)) {
      next();
      return;
    }
    // The body is read and dropped; the connection is closed after the answer when the
    // peer is the client itself (AnonymousLimits' closingFor).
    req.resume();
    res.set(closingFor(req));
    renderError(res, refusal, req.requestId);
  };
}
