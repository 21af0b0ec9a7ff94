import { leadFieldSchemas, type LeadInput } from '@switchboard/leads';
import type { Scope } from '@switchboard/db';
import type { Deps } from '../../deps';
import { invalidParameter, notFound } from '../../errors';
import { renderCallDetail } from '../../shared/call-render';
import { createLeadFor } from '../leads/create-lead';
import { createLeadBodySchema, leadSearchQuerySchema } from '../leads/schemas';
import { searchLeadsFor, type LeadSearchQuery } from '../leads/search-leads';
import { updateLeadFor, type UpdateLeadBody } from '../leads/update-lead';
import { renderLead } from '../leads/render';

/** One MCP tool: its inputs mirror the REST request it stands for, checked by the same schema. */
export interface McpTool {
  name: string;
  description: string;
  /** Scope the API key needs, as on the REST route. */
  scope: Scope;
  inputSchema: { type: 'object'; properties: object; required?: readonly string[] };
  /** `livemode`: the key's mode (docs/API.md, Test mode). */
  run(
    deps: Deps,
    tenantId: string,
    input: Record<string, unknown>,
    livemode: boolean,
  ): Promise<unknown>;
}

/**
 * The input of a tool on one resource: its `id` (the pattern of the REST path's id, with a
 * message that says which kind of id) and the other fields.
 */
const idInputSchema = <Fields extends object>(prefix: string, fields: Fields) =>
  ({
    type: 'object',
    required: ['id'],
    additionalProperties: false,
    properties: {
      id: {
        type: 'string',
        pattern: `^${prefix}_[A-Za-z0-9]{1,64}$`,
        'x-error-message': `id must be a ${prefix} id (${prefix}_...)`,
      },
      ...fields,
    },
  }) as const;

const updateLeadInputSchema = idInputSchema('lead', leadFieldSchemas);
const getCallInputSchema = idInputSchema('call', {});

/** The tools of POST /api/v1/mcp (docs/API.md, Leads). */
export const MCP_TOOLS: readonly McpTool[] = [
  {
    name: 'create_lead',
    description:
      'Create a lead (the body of POST /api/v1/leads). Needs a phone (E.164) or an email; one lead per phone. Returns the lead.',
    scope: 'write',
    inputSchema: createLeadBodySchema,
    async run(deps, tenantId, input, livemode) {
      return (await createLeadFor(deps, tenantId, input as LeadInput, 'mcp', null, livemode)).body;
    },
  },
  {
    name: 'update_lead',
    description:
      'Update a lead: its id plus any fields of PATCH /api/v1/leads/{id} (tags and metadata are replaced as a whole). Returns the lead.',
    scope: 'write',
    inputSchema: updateLeadInputSchema,
    async run(deps, tenantId, input, livemode) {
      const { id, ...fields } = input as UpdateLeadBody & { id: string };
      if (Object.keys(fields).length === 0) {
        throw invalidParameter('body', 'Send at least one field to change besides id');
      }
      return renderLead(await updateLeadFor(deps, tenantId, livemode, id, fields));
    },
  },
  {
    name: 'search_leads',
    description:
      'Search leads (GET /api/v1/leads/search): q matches a name or email fragment or phone digits; status, tag, limit (1-50, default 10) and cursor from the previous page.',
    scope: 'read',
    inputSchema: leadSearchQuerySchema,
    async run(deps, tenantId, input, livemode) {
      return searchLeadsFor(deps, tenantId, livemode, input as LeadSearchQuery);
    },
  },
  {
    name: 'get_call',
    description:
      'One call (GET /api/v1/calls/{id}) with transcript, recording, booking and cost, for context.',
    scope: 'read',
    inputSchema: getCallInputSchema,
    async run(deps, tenantId, input, livemode) {
      const call = await deps.stores.calls.get(deps.knex, tenantId, input.id as string, livemode);
      if (!call) throw notFound('call', 'id');
      return renderCallDetail(call);
    },
  },
];
