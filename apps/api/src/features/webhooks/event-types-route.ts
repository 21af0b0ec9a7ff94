import { defineRoute, type RouteDef } from '../../openapi/route';
import { eventCatalog } from '../../openapi/webhooks';
import { EVENT_NAME_PATTERN } from '../../shared/schemas';

const eventTypesQuerySchema = {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: EVENT_NAME_PATTERN, description: 'Only this event' },
  },
} as const;

const eventTypeSchema = {
  title: 'EventType',
  type: 'object',
  required: ['name', 'description', 'schema', 'example'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', description: 'The event name, e.g. call.completed' },
    description: { type: 'string' },
    schema: { type: 'object', description: 'JSON Schema of the envelope’s `data`' },
    example: { type: 'object', description: 'One whole envelope, as delivered' },
  },
} as const;

const eventTypesSchema = {
  title: 'EventTypeList',
  type: 'object',
  required: ['data', 'has_more'],
  additionalProperties: false,
  properties: {
    data: { type: 'array', items: eventTypeSchema },
    has_more: { const: false, description: 'Always false: the catalog is one page' },
  },
} as const;

/**
 * GET /event-types (read): the event catalog, built by the same function as the OpenAPI
 * `webhooks` section, so the two cannot disagree.
 */
export function eventTypeRoutes(): RouteDef[] {
  const catalog = eventCatalog();
  const first = catalog[0];
  return [
    defineRoute({
      method: 'get',
      path: '/event-types',
      operationId: 'listEventTypes',
      summary: 'Every event the service emits: description, schema of data, example envelope',
      tag: 'Webhooks',
      scope: 'read',
      // The catalog names no subscription: a limited session reads all of it too.
      portal: { capability: 'view', subscriptions: 'filter' },
      query: eventTypesQuerySchema,
      responses: {
        200: {
          description: 'The whole catalog',
          schema: eventTypesSchema,
          example: { data: first ? [first] : [], has_more: false },
        },
      },
      handler: (req, res) => {
        const only = req.valid.query.name;
        const data = typeof only === 'string' ? catalog.filter((e) => e.name === only) : catalog;
        res.json({ data, has_more: false });
      },
    }),
  ];
}
