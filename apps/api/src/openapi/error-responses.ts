import { ERROR_DOCS } from '../error-codes';
import type { ErrorType } from '../errors';
import type { SchemaComponents } from './components';
import { parsesJsonBody } from './register';
import type { RouteDef } from './route';

/** Every error response is this one component (the contract's error body). */
export const ERROR_SCHEMA_REF = { $ref: '#/components/schemas/Error' } as const;
/** The current version of a resource, on the 412 of a conditional edit (http/if-match.ts). */
const ETAG_HEADER_REF = { $ref: '#/components/headers/ETag' } as const;
/** Every response, success or error, carries X-Request-Id. */
export const REQUEST_ID_HEADER_REF = { $ref: '#/components/headers/X-Request-Id' } as const;
/**
 * Every answer to a request whose API key was recognised carries the per-key rate limit's
 * IETF fields (docs/API.md, Rate limits): every response of an authenticated operation but
 * its 401 and 431 (answered before the key is read).
 */
export const RATE_LIMIT_HEADER_REFS = {
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
  RateLimit: { $ref: '#/components/headers/RateLimit' },
} as const;

/** Answers given before the API key is known: they carry no rate-limit fields. */
const BEFORE_THE_KEY = new Set([401, 431]);

const retryAfter = {
  description: 'Seconds to wait before retrying',
  schema: { type: 'integer', minimum: 0 },
} as const;

interface ErrorExample {
  type: ErrorType;
  code: string;
  message: string;
  param?: string;
}

const typeOf = (status: number): ErrorType => {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 503) return 'service_unavailable';
  return status >= 500 ? 'api_error' : 'invalid_request_error';
};

const FALLBACK_CODES: Record<number, string> = {
  404: 'resource_not_found',
  409: 'conflict',
  422: 'unprocessable_entity',
};

/** The first snake_case word of a route's error description is its (first) error code. */
const codeIn = (status: number, description: string): string =>
  /\b[a-z]+(?:_[a-z]+)+\b/.exec(description)?.[0] ?? FALLBACK_CODES[status] ?? 'error';

/** `resource_not_found: no such call` → `No such call`; other texts stay as they are. */
const messageOf = (description: string): string => {
  const text = description.replace(/^[a-z]+(?:_[a-z]+)+: /, '');
  return text.charAt(0).toUpperCase() + text.slice(1);
};

interface ErrorSpec {
  description: string;
  example: ErrorExample;
  headers?: Record<string, object>;
}

/**
 * The errors every route of its kind can return, derived from what it declares, so that a
 * new route is documented as completely as the old ones without anyone listing them.
 */
function genericErrors(route: RouteDef): Map<number, ErrorSpec> {
  const out = new Map<number, ErrorSpec>();
  const query = route.query as { properties?: Record<string, unknown> } | undefined;
  const validates = Boolean(route.params || route.query || route.body || route.headers?.length);
  if (validates || parsesJsonBody(route)) {
    const codes = ['`invalid_parameter`: a value failed validation; `param` names the field.'];
    if (parsesJsonBody(route)) codes.push('`invalid_json`: the body is not valid JSON.');
    if (query?.properties?.cursor) codes.push('`invalid_cursor`: the cursor was altered.');
    out.set(400, {
      description: codes.join(' '),
      example: {
        type: 'invalid_request_error',
        code: 'invalid_parameter',
        message: 'limit must be an integer between 1 and 100',
        param: 'limit',
      },
    });
  }
  if (route.scope) {
    out.set(401, {
      description:
        '`missing_api_key`, `invalid_authorization_header` or `invalid_api_key` (unknown or ' +
        'revoked), with `WWW-Authenticate: Bearer`' +
        (route.portal ? '; `invalid_portal_token` for an expired or revoked portal token' : ''),
      example: {
        type: 'authentication_error',
        code: 'invalid_api_key',
        message: 'The API key is unknown or revoked',
      },
      headers: {
        'WWW-Authenticate': { description: 'Always `Bearer`', schema: { const: 'Bearer' } },
      },
    });
    out.set(403, {
      description:
        `\`insufficient_scope\`: the key lacks the \`${route.scope}\` scope` +
        (route.portal
          ? `, or a portal token lacks the \`${route.portal.capability}\` capability or this ` +
            'subscription'
          : ''),
      example: {
        type: 'permission_error',
        code: 'insufficient_scope',
        message: `This API key lacks the ${route.scope} scope required by this operation`,
      },
    });
  }
  if (parsesJsonBody(route)) {
    out.set(413, {
      description: '`payload_too_large`: the body exceeds 1 MiB',
      example: {
        type: 'invalid_request_error',
        code: 'payload_too_large',
        message: 'Request body exceeds 1 MiB',
      },
    });
    out.set(415, {
      description: '`unsupported_media_type`: send `Content-Type: application/json` (UTF-8)',
      example: {
        type: 'invalid_request_error',
        code: 'unsupported_media_type',
        message: 'Request bodies must be JSON with Content-Type: application/json',
      },
    });
  }
  if (route.scope) {
    out.set(429, {
      description:
        '`rate_limited`: the API key spent its burst, another limit of the operation was ' +
        'reached, or the client address spent its burst of requests without a valid key ' +
        '(policy `client-address`); retry after `Retry-After` seconds. `RateLimit-Policy` ' +
        'names the limit that refused, and `RateLimit` then says `r=0`',
      example: {
        type: 'rate_limit_error',
        code: 'rate_limited',
        message: 'Too many requests; retry after 1 second',
      },
      headers: { 'Retry-After': retryAfter },
    });
  }
  out.set(503, {
    description: '`service_unavailable`: a backing service is away; retry after `Retry-After`',
    example: {
      type: 'service_unavailable',
      code: 'service_unavailable',
      message: 'A backing service is unavailable; retry shortly',
    },
    headers: { 'Retry-After': retryAfter },
  });
  out.set(431, {
    description:
      '`request_headers_too_large`: the request line (with its query string) and headers ' +
      'exceed 16 KiB; answered before the API key is read (no RateLimit fields), and the ' +
      'connection is closed',
    example: {
      type: 'invalid_request_error',
      code: 'request_headers_too_large',
      message: 'The request line and headers exceed 16 KiB',
    },
  });
  out.set(500, {
    description: '`internal_error`: a bug on our side; the body never holds details',
    example: { type: 'api_error', code: 'internal_error', message: 'An internal error occurred' },
  });
  return out;
}

/** The error responses of one operation: the generic ones and the route's own, by status. */
export function errorResponses(
  route: RouteDef,
  components: SchemaComponents,
): Record<string, object> {
  const specs = genericErrors(route);
  for (const [key, description] of Object.entries(route.errors ?? {})) {
    const status = Number(key);
    const generic = specs.get(status);
    const code = codeIn(status, description);
    const headers: Record<string, object> = { ...generic?.headers };
    if (description.includes('Retry-After')) headers['Retry-After'] = retryAfter;
    if (status === 412) headers.ETag = ETAG_HEADER_REF;
    specs.set(status, {
      description: generic ? `${generic.description}; ${description}` : description,
      example: generic?.example ?? { type: typeOf(status), code, message: messageOf(description) },
      headers,
    });
  }
  const out: Record<string, object> = {};
  for (const status of [...specs.keys()].sort((a, b) => a - b)) {
    const spec = specs.get(status) as ErrorSpec;
    const limited = route.scope && !BEFORE_THE_KEY.has(status) ? RATE_LIMIT_HEADER_REFS : {};
    const other = route.errorBodies?.[status];
    out[String(status)] = {
      description: spec.description,
      headers: { 'X-Request-Id': REQUEST_ID_HEADER_REF, ...limited, ...spec.headers },
      content: {
        'application/json': {
          schema: other
            ? { oneOf: [ERROR_SCHEMA_REF, components.inline(other.schema)] }
            : ERROR_SCHEMA_REF,
          example: other?.example ?? {
            error: { ...spec.example, doc_url: `${ERROR_DOCS}#error-${spec.example.code}` },
            request_id: 'req_8a3f0c2b9d4e1f6a7b5c2d90',
          },
        },
      },
    };
  }
  return out;
}
