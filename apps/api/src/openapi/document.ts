import { errorBodySchema } from '../schemas/common';
import type { RouteDef } from './route';

const toOpenApiPath = (path: string): string => path.replace(/:([A-Za-z_]+)/g, '{$1}');

function parametersOf(route: RouteDef): object[] {
  const out: object[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    const s = schema as { properties?: Record<string, object>; required?: string[] } | undefined;
    for (const [name, prop] of Object.entries(s?.properties ?? {})) {
      out.push({
        name,
        in: where,
        required: where === 'path' || (s?.required ?? []).includes(name),
        schema: prop,
      });
    }
  }
  for (const h of route.headers ?? []) {
    out.push({
      name: h.name,
      in: 'header',
      required: h.required ?? false,
      description: h.description,
      schema: { type: 'string' },
    });
  }
  return out;
}

/** The OpenAPI 3.1 document of every declared route, built from the routes themselves. */
export function buildOpenApi(routes: readonly RouteDef[], version: string): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    const path = toOpenApiPath(route.path);
    const responses: Record<string, object> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = spec.schema
        ? {
            description: spec.description,
            content: { 'application/json': { schema: spec.schema } },
          }
        : { description: spec.description };
    }
    responses.default = {
      description: 'Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
    paths[path] ??= {};
    (paths[path] as Record<string, object>)[route.method] = {
      summary: route.summary,
      tags: [route.tag],
      ...(route.scope ? { security: [{ bearerAuth: [] }], 'x-required-scope': route.scope } : {}),
      parameters: parametersOf(route),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: route.body } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchboard API',
      version,
      description: 'Call history, outbound calls and webhook subscriptions for AI receptionists.',
    },
    servers: [{ url: '/api/v1' }],
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: errorBodySchema },
    },
    paths,
  };
}
