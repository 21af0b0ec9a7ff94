import type { SchemaComponents } from './components';
import { errorResponses, RATE_LIMIT_HEADER_REFS, REQUEST_ID_HEADER_REF } from './error-responses';
import type { RouteDef } from './route';

/** `/receptionists/:id` → `/receptionists/{id}`. */
export const toOpenApiPath = (path: string): string => path.replace(/:([A-Za-z_]+)/g, '{$1}');

interface ObjectSchema {
  properties?: Record<string, { description?: string }>;
  required?: string[];
}

function parametersOf(route: RouteDef, components: SchemaComponents): object[] {
  const out: object[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    const s = schema as ObjectSchema | undefined;
    for (const [name, prop] of Object.entries(s?.properties ?? {})) {
      out.push({
        name,
        in: where,
        required: where === 'path' || (s?.required ?? []).includes(name),
        ...(prop.description ? { description: prop.description } : {}),
        schema: components.inline(prop),
      });
    }
  }
  for (const h of route.headers ?? []) {
    out.push({
      name: h.name,
      in: 'header',
      required: h.required ?? false,
      description: h.description,
      schema: h.schema ?? { type: 'string' },
    });
  }
  return out;
}

function successResponses(route: RouteDef, components: SchemaComponents): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    out[status] = {
      description: spec.description,
      headers: {
        'X-Request-Id': REQUEST_ID_HEADER_REF,
        ...(route.scope ? RATE_LIMIT_HEADER_REFS : {}),
        ...spec.headers,
      },
      ...(spec.schema
        ? {
            content: {
              [spec.contentType ?? 'application/json']: {
                schema: components.inline(spec.schema),
                ...(spec.example === undefined ? {} : { example: spec.example }),
              },
            },
          }
        : {}),
    };
  }
  return out;
}

const scopeNote = (route: RouteDef): string =>
  [
    route.scope
      ? `Requires an API key with the \`${route.scope}\` scope (or a wider one).`
      : 'No API key.',
    route.portal
      ? `A portal token with the \`${route.portal.capability}\` capability may call it too.`
      : '',
  ]
    .filter(Boolean)
    .join(' ');

/** The OpenAPI operation object of one route. */
export function buildOperation(route: RouteDef, components: SchemaComponents): object {
  const description = [route.description, scopeNote(route)].filter(Boolean).join('\n\n');
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(description ? { description } : {}),
    tags: [route.tag],
    ...(route.scope
      ? { security: [{ bearerAuth: [] }], 'x-required-scope': route.scope }
      : { security: [] }),
    ...(route.portal
      ? {
          'x-portal-capability': route.portal.capability,
          'x-portal-subscriptions': route.portal.subscriptions,
        }
      : {}),
    parameters: parametersOf(route, components),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: components.inline(route.body),
                ...(route.bodyExample === undefined ? {} : { example: route.bodyExample }),
              },
            },
          },
        }
      : {}),
    ...(route.rawBody
      ? {
          requestBody: {
            required: true,
            description: route.rawBody.description,
            content: {
              [route.rawBody.contentType]: {
                schema: { type: 'string' },
                ...(route.bodyExample === undefined ? {} : { example: route.bodyExample }),
              },
            },
          },
        }
      : {}),
    responses: { ...successResponses(route, components), ...errorResponses(route, components) },
  };
}
