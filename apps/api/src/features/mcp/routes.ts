import type { Deps } from '../../deps';
import { ApiError } from '../../errors';
import { defineRoute, type RouteDef } from '../../openapi/route';

/** What the MCP transport answers for a failure of the protocol itself. */
const jsonRpcErrorSchema = {
  title: 'JsonRpcError',
  description:
    'A JSON-RPC 2.0 error of the MCP transport (a message that is not JSON-RPC, a missing Accept)',
  type: 'object',
  required: ['jsonrpc', 'error'],
  properties: {
    jsonrpc: { const: '2.0' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
    id: { type: ['string', 'integer', 'null'] },
  },
} as const;

const jsonRpcErrorExample = (code: number, message: string) => ({
  jsonrpc: '2.0',
  error: { code, message },
  id: null,
});

/** One JSON-RPC message, or a batch of them; the MCP transport checks the rest. */
const jsonRpcSchema = {
  type: ['object', 'array'],
  items: { type: 'object' },
  description:
    'A JSON-RPC 2.0 message of the Model Context Protocol (Streamable HTTP), or a batch of them',
} as const;

/**
 * POST /api/v1/mcp: the Model Context Protocol over Streamable HTTP, stateless (a fresh
 * server and transport per request, nothing kept between requests), answering with JSON. Authenticated like
 * every route (the API key's tenant and scopes), so it is declared like every route; GET and
 * DELETE (server-sent event streams and their teardown) answer 405.
 */
export function mcpRoutes(deps: Deps): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/mcp',
      operationId: 'callMcp',
      summary:
        'Model Context Protocol endpoint: tools create_lead, update_lead (write), search_leads, get_call (read)',
      tag: 'MCP',
      scope: 'read',
      body: jsonRpcSchema,
      bodyExample: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'search_leads', arguments: { q: 'dana' } },
      },
      responses: {
        200: {
          description: 'The JSON-RPC response',
          schema: { type: 'object' },
          example: {
            jsonrpc: '2.0',
            id: 1,
            result: { content: [{ type: 'text', text: '{"data": [...], "has_more": false}' }] },
          },
        },
        202: { description: 'A notification was accepted' },
      },
      errors: {
        400: 'a message that is not JSON-RPC: a JSON-RPC error of the MCP transport (code -32700 or -32600)',
        406: 'Accept must list application/json and text/event-stream (a JSON-RPC error of the MCP transport)',
      },
      errorBodies: {
        400: {
          schema: jsonRpcErrorSchema,
          example: jsonRpcErrorExample(-32700, 'Parse error: Invalid JSON-RPC message'),
        },
        406: {
          schema: jsonRpcErrorSchema,
          example: jsonRpcErrorExample(
            -32000,
            'Not Acceptable: Client must accept both application/json and text/event-stream',
          ),
        },
      },
      handler: async (req, res) => {
        // The transport reads application/json only: a `+json` type that the API's JSON
        // parser accepted, or no body at all, would get the transport's JSON-RPC 415. Refused
        // here instead, with the contract's error body, as every route refuses a content type.
        const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
        if (type !== 'application/json') {
          throw new ApiError(
            415,
            'invalid_request_error',
            'unsupported_media_type',
            'Request bodies here must be JSON with Content-Type: application/json',
          );
        }
        // Imported here, not at the top: the MCP SDK (with zod, about 230 module files) loads
        // on an API process's first MCP request, not at its start (decision 0135); the
        // module cache makes later imports free.
        const { serveMcp } = await import('./server');
        await serveMcp(deps, req.auth, req, res);
      },
    }),
  ];
}
