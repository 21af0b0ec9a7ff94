import type { Request, Response } from 'express';
import type { PortalCapability, Scope } from '@switchboard/db';

export type Method = 'get' | 'post' | 'patch' | 'delete' | 'put';

/** A success response: its schema and a realistic example body (checked against the schema). */
export interface ResponseSpec {
  description: string;
  schema?: object;
  /** An example body; the OpenAPI tests validate it against `schema`. */
  example?: unknown;
  /** The body's media type when it is not JSON (an event stream: `text/event-stream`). */
  contentType?: string;
  /** Response headers worth documenting, e.g. `Location` or `Idempotent-Replayed`. */
  headers?: Readonly<Record<string, { description: string; schema?: object }>>;
}

/**
 * A route is declared once: its schemas validate requests and, from the same objects, build
 * its OpenAPI entry. A route that is not declared this way does not exist.
 *
 * Error responses are derived by the document builder from what the route declares (400 for
 * params/query/body/headers, 401 and 403 for a scope, 413 and 415 for a JSON body, 429, 503
 * and 500 for every authenticated route); `errors` adds the ones only this route returns.
 */
export interface RouteDef {
  method: Method;
  /** Express path below the version prefix, e.g. `/receptionists/:id`. */
  path: string;
  /**
   * Stable, unique, lowerCamelCase verb + noun (`listCalls`, `startOutboundCall`). Public:
   * SDKs and generated clients are keyed by it, so never rename one.
   */
  operationId: string;
  summary: string;
  /** Longer Markdown shown under the summary in the API reference. */
  description?: string;
  tag: string;
  /** Required scope; `null` for routes with their own authentication or none. */
  scope: Scope | null;
  /**
   * For a route without a scope: whether every request takes a token of its address's bucket
   * of requests without a credential (docs/API.md, Rate limits), so that while the bucket is
   * empty the early refusal answers it 429 before anything else runs (./http/early-refusal.ts).
   */
  addressLimited?: true;
  /**
   * Whether a portal token (docs/API.md, Tenant portal) may call this route: the capability
   * it needs, and how a session limited to some subscriptions is held to them: `path` (the
   * `:id` of the path must be one of them), `filter` (the handler lists only them) or `none`
   * (a limited session is refused). Absent: portal tokens get 403 here.
   */
  portal?: { capability: PortalCapability; subscriptions: 'path' | 'filter' | 'none' };
  params?: object;
  query?: object;
  body?: object;
  /** An example request body; the OpenAPI tests validate it against `body`. */
  bodyExample?: unknown;
  /**
   * A body that is not JSON (a CSV upload): the route reads the request stream itself, so no
   * parser buffers it; a request with another Content-Type is refused with 415 first.
   */
  rawBody?: { contentType: string; description: string };
  /** Extra request headers worth documenting (e.g. Idempotency-Key); they are validated. */
  headers?: Array<{ name: string; description: string; required?: boolean; schema?: object }>;
  /** Success responses by status. */
  responses: Record<number, ResponseSpec>;
  /**
   * Error statuses only this route returns, with what they mean. Start the text with the
   * error code(s) (`receptionist_not_ready, or idempotency_request_in_progress`): the
   * document's example for the status uses the first code it finds there.
   */
  errors?: Readonly<Record<number, string>>;
  /**
   * Error statuses whose body may be another shape than the Error component (only the MCP
   * transport's JSON-RPC errors): documented as one of the two, with this example. A titled
   * schema, so the document names it.
   */
  errorBodies?: Readonly<Record<number, { schema: object; example: unknown }>>;
  handler: (req: Request, res: Response) => Promise<void> | void;
}

export const defineRoute = (def: RouteDef): RouteDef => def;
