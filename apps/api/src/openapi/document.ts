import { errorBodySchema } from '../shared/schemas';
import { SchemaComponents } from './components';
import { buildOperation, toOpenApiPath } from './operation';
import { API_OVERVIEW } from './overview';
import type { RouteDef } from './route';
import { buildWebhooks, WEBHOOK_EVENTS_TAG } from './webhooks';

/**
 * What each tag is about, shown as the section intro in the reference. A tag used by a route
 * but missing here is a linter warning, which fails `npm test`: describe new tags here.
 */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Receptionists: 'The AI receptionists of your account: their numbers, greetings and status.',
  Calls:
    'Call history (tenant-wide or per receptionist, newest first, with filters), one call ' +
    'with transcript, recording, booking and cost, and outbound calls placed by the service.',
  Usage:
    'Minutes and messages of a billing month (UTC) against the plan, with the ' +
    'per-receptionist breakdown.',
  SMS:
    'Text messages: send one from a ready receptionist (accepted now, sent by the worker), ' +
    "read one, and list a receptionist's messages in both directions.",
  Leads:
    'Prospects captured by calls, imported from CSV, created over the API or by assistants ' +
    'through MCP; one lead per phone number.',
  Campaigns:
    'SMS campaigns to a list of leads or numbers, sent at a steady rate, opt-outs honoured.',
  MCP:
    'The Model Context Protocol endpoint for AI assistants (Streamable HTTP, stateless): ' +
    'tools to create, update and search leads and to read a call, with the same API keys.',
  Webhooks:
    'Subscriptions that receive signed events over HTTPS, their delivery log and manual ' +
    'retries. Every operation here needs the `admin` scope; a portal token may call those ' +
    'that name an `x-portal-capability` it has.',
  Events:
    'Every event of your account, operational ones included, as the envelopes webhooks ' +
    'carry: a list newest first with filters, one event by id, and a live stream ' +
    '(Server-Sent Events) that resumes where it left off.',
  'Test mode':
    'Keys made with `--mode test` (`sk_test_…`) make test data (`livemode: false`) that ' +
    'live keys never see, and see none of the live data; test-mode calls and SMS ' +
    '(campaigns included) are always simulated and never metered. Wipe the test data here.',
  Portal:
    'Links to the tenant portal, a web page where a tenant’s team manages its webhooks ' +
    'without an API key: create and revoke sessions, and trade a link’s one-use code.',
  [WEBHOOK_EVENTS_TAG]:
    'What Switchboard POSTs to your subscriptions: one entry per event type, with its ' +
    'envelope, its `data` and the signature headers.',
};

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: object;
  paths: Record<string, Record<string, object>>;
  webhooks: Record<string, object>;
  components: object;
  [key: string]: unknown;
}

/**
 * The OpenAPI 3.1 document of every declared route and every event type, built from the
 * routes and the event catalog themselves, so it cannot drift from what the API does.
 * @throws Error when two routes share an operationId or two schemas share a title.
 */
export function buildOpenApi(routes: readonly RouteDef[], version: string): OpenApiDocument {
  const components = new SchemaComponents();
  components.ref('Error', { ...errorBodySchema, title: 'Error' });
  const paths: Record<string, Record<string, object>> = {};
  const operationIds = new Set<string>();
  const tags: string[] = [];
  for (const route of routes) {
    if (operationIds.has(route.operationId)) {
      throw new Error(`operationId ${route.operationId} is used by two routes`);
    }
    operationIds.add(route.operationId);
    if (!tags.includes(route.tag)) tags.push(route.tag);
    const path = toOpenApiPath(route.path);
    paths[path] ??= {};
    (paths[path] as Record<string, object>)[route.method] = buildOperation(route, components);
  }
  const webhooks = buildWebhooks(components);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchboard API',
      version,
      description: API_OVERVIEW,
      // Tenants get their keys from the operator of the deployment, who answers for it.
      contact: { name: 'The operator of this deployment, who issued your API key' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/api/v1', description: 'This server (also answers under /v1)' }],
    tags: [...tags, WEBHOOK_EVENTS_TAG].map((name) => ({
      name,
      ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}),
    })),
    paths,
    webhooks,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key (`sk_live_…`) with the scope each operation names: read, write or ' +
            'admin; or, on the operations that name an `x-portal-capability`, a portal token ' +
            '(`pt_…`) with that capability',
        },
      },
      headers: {
        'X-Request-Id': {
          description:
            'Identifies this request in our logs; quote it when reporting a problem. The ' +
            "client's own X-Request-Id when it sent a well-formed one, else one of ours (req_…)",
          schema: { type: 'string', pattern: '^[\\w.:-]{1,128}$' },
        },
        ETag: {
          description: 'The resource\'s current version (`W/"<n>"`): send it back in If-Match',
          schema: { type: 'string', example: 'W/"3"' },
        },
        'RateLimit-Policy': {
          description:
            "The API key's rate limit (IETF draft-ietf-httpapi-ratelimit-headers-11): " +
            '`"api-key";q=<burst>;w=<seconds>`, a token bucket of `q` requests that an empty ' +
            'bucket takes `w` seconds to refill (q/w requests a second sustained)',
          schema: { type: 'string', example: '"api-key";q=200;w=2' },
        },
        RateLimit: {
          description:
            'Where the API key stands: `"api-key";r=<remaining>;t=<seconds>`, the requests ' +
            'that may be made now and the seconds until the bucket is full again (on a 429: ' +
            '`r=0` for the `Retry-After` seconds)',
          schema: { type: 'string', example: '"api-key";r=187;t=1' },
        },
      },
      schemas: components.all(),
    },
  };
}
