import request from 'supertest';
import { EVENT_TYPES } from '@switchboard/events';
import { lintOpenApi } from '../../scripts/openapi/lint';
import { lintWithSpectral } from '../../scripts/openapi/spectral';
import { createTestContext, type TestContext } from '../support/context';
import { expressRoutes, type ExpressRoute } from '../support/express-routes';

// The served OpenAPI document is a product: a real linter (Redocly CLI, recommended rules)
// accepts it without a single warning, and it lists exactly the routes Express serves.
let ctx: TestContext;
let doc: {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: Operation }>;
  tags: Array<{ name: string; description?: string }>;
  components: { schemas: Record<string, unknown> };
};

interface MediaType {
  schema?: { $ref?: string };
  example?: unknown;
}
interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  security?: unknown[];
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<
    string,
    { description: string; headers?: Record<string, unknown>; content?: Record<string, MediaType> }
  >;
}

beforeAll(async () => {
  ctx = await createTestContext();
  doc = (await request(ctx.app).get('/api/v1/openapi.json').expect(200)).body;
});
afterAll(async () => {
  await ctx?.close();
});

/**
 * Not in the document, on purpose: the unauthenticated service routes (probes, the document
 * itself and its reference page, the tenant portal page) and the internal telephony ingestion, which is not a public
 * API (its callers are the voice platform, with its own token).
 */
const isServiceRoute = (path: string): boolean =>
  ['/healthz', '/readyz'].includes(path) ||
  path.startsWith('/internal/') ||
  path.startsWith('/portal') ||
  /^\/(api\/)?v1\/(openapi\.json|docs(\/.*)?)$/.test(path);

/** `/api/v1/calls/:id` under one prefix → `get /calls/{id}`. */
const documented = (routes: ExpressRoute[], prefix: string): string[] =>
  routes
    .filter((r) => r.path.startsWith(`${prefix}/`) && !isServiceRoute(r.path))
    .map((r) => `${r.method} ${r.path.slice(prefix.length).replace(/:([A-Za-z_]+)/g, '{$1}')}`)
    .sort();

const documentOperations = (): string[] =>
  Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
    .sort();

const operations = (): Array<[string, Operation]> =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => [`${method} ${path}`, op] as [string, Operation]),
  );

describe('lint', () => {
  it('Redocly CLI (recommended rules) finds no warning and no error', async () => {
    const problems = await lintOpenApi(doc);
    expect(problems).toEqual([]);
  });

  it('would catch a missing operationId, a missing 4xx and an example that breaks its schema', async () => {
    const broken = structuredClone(doc);
    const op = broken.paths['/calls/{id}']?.get as Operation;
    delete (op as Partial<Operation>).operationId;
    for (const status of Object.keys(op.responses))
      if (status >= '400') delete op.responses[status];
    const accepted = broken.paths['/calls/outbound']?.post?.responses['202']?.content;
    (accepted?.['application/json'] as MediaType).example = { id: 42 };
    const rules = (await lintOpenApi(broken)).map((p) => p.ruleId);
    expect(rules).toEqual(
      expect.arrayContaining([
        'operation-operationId',
        'operation-4xx-response',
        'no-invalid-media-type-examples',
      ]),
    );
  });

  // One Spectral run for both documents (its start costs about a second of CPU).
  it('Spectral CLI (spectral:oas) finds nothing, and would catch what it found before', async () => {
    const broken = structuredClone(doc) as typeof doc & { info: { contact?: unknown } };
    delete broken.info.contact;
    const mcp = broken.paths['/mcp']?.post as Operation & {
      requestBody: { content: Record<string, { schema: { items?: unknown } }> };
    };
    delete mcp.requestBody.content['application/json']?.schema.items;
    // The exception for the event catalog's entries (.spectral.yaml) still checks the
    // media example itself.
    const types = broken.paths['/event-types']?.get?.responses['200']?.content;
    (types?.['application/json'] as MediaType).example = { data: 'none', has_more: false };
    const [clean, found] = await lintWithSpectral(doc, broken);
    expect(clean).toEqual([]);
    expect(found?.map((p) => p.ruleId).sort()).toEqual([
      'array-items',
      'info-contact',
      'oas3-valid-media-example',
    ]);
  }, 240_000); // a hang bound only: the CLI's start alone took over a minute at load 12
});

describe('route coverage', () => {
  it('documents every Express route, and nothing Express does not route', () => {
    const routes = expressRoutes(ctx.app);
    expect(documented(routes, '/api/v1')).toEqual(documentOperations());
    // The /v1 alias serves exactly the same routes.
    expect(documented(routes, '/v1')).toEqual(documentOperations());
    // The walk sees the service routes too, so their exclusion is deliberate, not blindness.
    expect(routes.map((r) => r.path)).toEqual(
      expect.arrayContaining(['/healthz', '/api/v1/docs', '/internal/v1/telephony/events']),
    );
  });

  it('fails for a route nobody documented', () => {
    const app = ctx.app;
    const before = app.router.stack.length;
    app.get('/api/v1/undocumented', (_req, res) => {
      res.end();
    });
    try {
      expect(documented(expressRoutes(app), '/api/v1')).toContain('get /undocumented');
      expect(documented(expressRoutes(app), '/api/v1')).not.toEqual(documentOperations());
    } finally {
      app.router.stack.splice(before);
    }
  });

  it('serves the same document under /v1', async () => {
    const alias = await request(ctx.app).get('/v1/openapi.json').expect(200);
    expect(alias.body).toEqual(doc);
  });
});

describe('operations', () => {
  it('keep their stable operationIds', () => {
    const ids = Object.fromEntries(operations().map(([key, op]) => [key, op.operationId]));
    expect(ids).toEqual({
      'get /receptionists': 'listReceptionists',
      'post /receptionists': 'createReceptionist',
      'get /receptionists/{id}': 'getReceptionist',
      'patch /receptionists/{id}': 'updateReceptionist',
      'post /receptionists/{id}/provision': 'provisionReceptionist',
      'get /receptionists/{id}/calls': 'listReceptionistCalls',
      'get /calls': 'listCalls',
      'get /calls/{id}': 'getCall',
      'post /calls/outbound': 'startOutboundCall',
      'get /usage': 'getUsage',
      'post /sms/send': 'sendSms',
      'get /sms/{id}': 'getSms',
      'delete /sms/{id}': 'cancelSms',
      'delete /test-data': 'deleteTestData',
      'get /sms/opt-outs': 'listSmsOptOuts',
      'get /receptionists/{id}/sms': 'listReceptionistSms',
      'get /leads/search': 'searchLeads',
      'post /leads': 'createLead',
      'post /leads/import': 'importLeads',
      'get /leads/imports/{id}': 'getLeadImport',
      'get /leads/{id}': 'getLead',
      'patch /leads/{id}': 'updateLead',
      'post /campaigns': 'createCampaign',
      'get /campaigns': 'listCampaigns',
      'get /campaigns/{id}': 'getCampaign',
      'get /campaigns/{id}/recipients': 'listCampaignRecipients',
      'post /campaigns/{id}/cancel': 'cancelCampaign',
      'post /mcp': 'callMcp',
      'post /webhooks': 'createWebhook',
      'get /webhooks': 'listWebhooks',
      'get /webhooks/{id}': 'getWebhook',
      'delete /webhooks/{id}': 'deleteWebhook',
      'post /webhooks/{id}/test': 'testWebhook',
      'post /webhooks/{id}/enable': 'enableWebhook',
      'get /webhooks/{id}/deliveries': 'listWebhookDeliveries',
      'post /webhooks/{id}/deliveries/{delivery_id}/retry': 'retryWebhookDelivery',
      'patch /webhooks/{id}': 'updateWebhook',
      'post /webhooks/{id}/rotate-secret': 'rotateWebhookSecret',
      'get /webhooks/{id}/deliveries/{delivery_id}': 'getWebhookDelivery',
      'get /webhook-deliveries': 'listTenantWebhookDeliveries',
      'get /event-types': 'listEventTypes',
      'get /events': 'listEvents',
      'get /events/{id}': 'getEvent',
      'get /events/stream': 'streamEvents',
      'post /webhooks/{id}/recover': 'recoverWebhook',
      'get /webhooks/{id}/recoveries/{recovery_id}': 'getWebhookRecovery',
      'get /webhooks/{id}/stats': 'getWebhookStats',
      'post /portal/sessions': 'createPortalSession',
      'delete /portal/sessions/{id}': 'revokePortalSession',
      'get /portal/sessions': 'listPortalSessions',
      'delete /portal/sessions': 'revokeAllPortalSessions',
      'post /portal/exchange': 'exchangePortalCode',
    });
  });

  it('each has a lowerCamelCase operationId, a described tag and examples of every body', () => {
    const described = new Set(doc.tags.filter((t) => t.description).map((t) => t.name));
    for (const [key, op] of operations()) {
      expect([key, op.operationId]).toEqual([key, expect.stringMatching(/^[a-z]+[A-Za-z]*$/)]);
      expect([key, described.has(op.tags[0] ?? '')]).toEqual([key, true]);
      const bodies = [
        op.requestBody?.content['application/json'],
        ...Object.entries(op.responses)
          .filter(([status]) => status.startsWith('2'))
          .map(([, r]) => r.content?.['application/json']),
      ].filter((m): m is MediaType => m !== undefined);
      for (const media of bodies) expect([key, media.example]).toEqual([key, expect.anything()]);
    }
  });

  it('describe every error with the one Error component and an example', () => {
    for (const [key, op] of operations()) {
      const statuses = Object.keys(op.responses);
      // Operations without an API key (the portal code exchange) have no scope or key limit.
      const keyed = (op as { security?: unknown[] }).security?.length !== 0;
      expect([key, statuses]).toEqual([
        key,
        expect.arrayContaining(
          keyed ? ['400', '401', '403', '429', '500', '503'] : ['400', '401', '500', '503'],
        ),
      ]);
      for (const [status, response] of Object.entries(op.responses)) {
        expect([key, status, response.headers?.['X-Request-Id']]).toEqual([
          key,
          status,
          expect.anything(),
        ]);
        if (Number(status) < 400) continue;
        const media = response.content?.['application/json'];
        // The one exception: the MCP transport's own JSON-RPC errors (docs/decisions/0035-mcp.md).
        const jsonRpc = key === 'post /mcp' && ['400', '406'].includes(status);
        const error = { $ref: '#/components/schemas/Error' };
        expect([key, status, media?.schema]).toEqual([
          key,
          status,
          jsonRpc ? { oneOf: [error, { $ref: '#/components/schemas/JsonRpcError' }] } : error,
        ]);
        expect(media?.example).toMatchObject({
          error: { code: jsonRpc ? expect.any(Number) : expect.any(String) },
        });
      }
      expect(op.security).toEqual(keyed ? [{ bearerAuth: [] }] : []);
    }
    const outbound = doc.paths['/calls/outbound']?.post as Operation;
    expect(Object.keys(outbound.responses)).toEqual([
      '202',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '415',
      '422',
      '429',
      '431',
      '500',
      '503',
    ]);
    expect(outbound.responses['409']?.headers).toHaveProperty('Retry-After');
    // Answered by the HTTP parser, before the key is read: no rate-limit fields.
    expect(outbound.responses['431']?.headers).not.toHaveProperty('RateLimit');
    expect(outbound.responses['429']?.headers).toHaveProperty('RateLimit');
    expect(outbound.responses['401']?.headers).toHaveProperty('WWW-Authenticate');
  });
});

describe('webhooks', () => {
  it('lists one entry per event type of the catalog, with its envelope and signature headers', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const event of EVENT_TYPES) {
      const op = doc.webhooks[event]?.post as Operation & { parameters: Array<{ name: string }> };
      const body = op.requestBody?.content['application/json'] as MediaType;
      const envelope = doc.components.schemas[(body.schema?.$ref ?? '').split('/').pop() ?? ''];
      expect(envelope).toMatchObject({
        properties: { event: { const: event }, data: expect.any(Object) },
      });
      expect(body.example).toMatchObject({ event });
      expect(op.parameters.map((p) => p.name)).toEqual(
        expect.arrayContaining(['x-service-signature', 'webhook-signature', 'webhook-id']),
      );
    }
  });
});
