import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Deps } from '../../deps';
import { docUrlOf } from '../../error-codes';
import { ApiError, insufficientScope } from '../../errors';
import type { AuthContext } from '../../http/types';
import { hasScope } from '../../http/auth';
import { compileValidator } from '../../http/validation';
import { MCP_TOOLS } from './tools';

const checks = new Map(MCP_TOOLS.map((t) => [t.name, compileValidator('body', t.inputSchema)]));

const result = (value: object, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
  ...(isError ? { isError: true } : {}),
});

/** An API error as a tool error: the same `{error: {type, code, message, param?, doc_url}}` body. */
const toolError = (e: ApiError): CallToolResult =>
  result(
    {
      error: {
        type: e.type,
        code: e.code,
        message: e.message,
        ...(e.param ? { param: e.param } : {}),
        doc_url: docUrlOf(e.code),
      },
    },
    true,
  );

/**
 * An MCP server for one request of one API key (stateless: the Streamable HTTP transport
 * keeps nothing between requests). Tools run the same use cases as the REST routes, with the key's tenant
 * and scopes; every failure, a missing scope included, is a tool error carrying the API's
 * error code and message, never a stack or an internal message.
 *
 * The low-level `Server` is used rather than `McpServer` because the tools' inputs are the
 * REST routes' JSON Schemas, validated by the API's own ajv (one validation library).
 */
function buildMcpServer(deps: Deps, auth: AuthContext): Server {
  const server = new Server(
    { name: 'switchboard', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: MCP_TOOLS.map((t) => ({
      name: t.name,
      description: `${t.description} Scope: ${t.scope}.`,
      inputSchema: t.inputSchema,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = MCP_TOOLS.find((t) => t.name === request.params.name);
    if (!tool) {
      return toolError(
        new ApiError(
          404,
          'invalid_request_error',
          'unknown_tool',
          `No tool ${request.params.name}`,
        ),
      );
    }
    try {
      if (!hasScope(auth.scopes, tool.scope)) throw insufficientScope(tool.scope);
      const input = (checks.get(tool.name) as (v: unknown) => unknown)(
        request.params.arguments ?? {},
      ) as Record<string, unknown>;
      return result((await tool.run(deps, auth.tenantId, input, auth.livemode)) as object);
    } catch (err) {
      if (err instanceof ApiError) return toolError(err);
      deps.logger.error({ err, tool: tool.name }, 'mcp tool failed');
      return toolError(
        new ApiError(500, 'api_error', 'internal_error', 'An internal error occurred'),
      );
    }
  });
  return server;
}

/**
 * Answers one MCP request (its JSON `body` already parsed) with a fresh server and a
 * stateless transport answering in JSON; both are closed with the response.
 */
export async function serveMcp(
  deps: Deps,
  auth: AuthContext,
  req: IncomingMessage & { body?: unknown },
  res: ServerResponse,
): Promise<void> {
  const server = buildMcpServer(deps, auth);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  // Our `auth` is not the SDK's AuthInfo: the tools get the key from the closure.
  await transport.handleRequest(req, res, req.body);
}
