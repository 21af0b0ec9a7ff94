import { renderLeadImport, type LeadInput } from '@switchboard/leads';
import type { Deps } from '../../deps';
import { idempotencyKeyHeaderDoc, idempotentReplayHeaderDoc } from '../../idempotency';
import { defineCreateRoute, defineGetRoute, locationHeaderDoc } from '../../shared/resource-routes';
import { defineRoute, type RouteDef } from '../../openapi/route';
import {
  etagHeaderDoc,
  ifMatchHeaderDoc,
  ifMatchOf,
  PRECONDITION_FAILED_DOC,
  sendVersioned,
} from '../../http/if-match';
import { idParamSchema, pageExample, paginated } from '../../shared/schemas';
import { createLeadFor } from './create-lead';
import { importLeads } from './import-leads';
import { renderLead } from './render';
import {
  completedLeadImportExample,
  createLeadBodySchema,
  createLeadExample,
  leadCsvExample,
  leadExample,
  leadImportExample,
  leadImportSchema,
  leadSchema,
  leadSearchQuerySchema,
  updateLeadBodySchema,
  updateLeadExample,
} from './schemas';
import { searchLeadsFor, type LeadSearchQuery } from './search-leads';
import { updateLeadFor, type UpdateLeadBody } from './update-lead';

const LEAD_EXISTS =
  'lead_exists: another lead has this phone (or, for a lead without phone, this email); the message names it';

/** Leads and CSV imports (docs/API.md, Leads). `/leads/search` comes before `/leads/:id`. */
export function leadRoutes(deps: Deps): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/leads/search',
      operationId: 'searchLeads',
      summary: 'Search leads by name, phone digits or email; filter by status and tag',
      tag: 'Leads',
      scope: 'read',
      query: leadSearchQuerySchema,
      responses: {
        200: {
          description: 'A page of leads, newest first',
          schema: paginated(leadSchema),
          example: pageExample(leadExample),
        },
      },
      handler: async (req, res) => {
        const { tenantId, livemode } = req.auth;
        res.json(
          await searchLeadsFor(deps, tenantId, livemode, req.valid.query as LeadSearchQuery),
        );
      },
    }),
    defineCreateRoute<LeadInput>(deps.idempotency, {
      path: '/leads',
      operationId: 'createLead',
      summary: 'Create a lead (emits lead.created)',
      tag: 'Leads',
      scope: 'write',
      body: createLeadBodySchema,
      bodyExample: createLeadExample,
      status: 201,
      answer: {
        description: 'The lead',
        schema: leadSchema,
        example: leadExample,
        location: 'The lead: /api/v1/leads/{id}',
      },
      errors: {
        404: 'resource_not_found: receptionist_id is not one of your receptionists',
        409: `${LEAD_EXISTS}; or idempotency_request_in_progress (Retry-After)`,
        422: 'idempotency_key_reused: the key was used with another body',
      },
      create: (tenantId, body, scope, auth) =>
        createLeadFor(deps, tenantId, body, 'api', scope, auth.livemode),
    }),
    defineRoute({
      method: 'post',
      path: '/leads/import',
      operationId: 'importLeads',
      summary: 'Import leads from a CSV file (up to 20 MiB); the worker imports it in batches',
      tag: 'Leads',
      scope: 'write',
      rawBody: {
        contentType: 'text/csv',
        description:
          'A header row naming columns among name, phone, email, status, notes, tags ' +
          '(case-insensitive; tags separated by ";"; other columns go to metadata), then one ' +
          'lead per row. Upserted by phone, or by email when a row has no phone.',
      },
      bodyExample: leadCsvExample,
      headers: [idempotencyKeyHeaderDoc],
      responses: {
        202: {
          description: 'The import, processing',
          schema: leadImportSchema,
          example: leadImportExample,
          headers: {
            ...locationHeaderDoc('The import: /api/v1/leads/imports/{id}'),
            ...idempotentReplayHeaderDoc,
          },
        },
      },
      errors: {
        400: 'invalid_parameter (param body): the file is empty, has no usable header row or no data row, or is not readable CSV',
        409: 'idempotency_request_in_progress: the first request with this key still runs (Retry-After)',
        413: 'payload_too_large: the file is larger than 20 MiB',
        415: 'unsupported_media_type: Content-Type is not text/csv',
        422: 'idempotency_key_reused: the key was used with another file',
      },
      handler: (req, res) => importLeads(deps, req, res),
    }),
    defineGetRoute({
      path: '/leads/imports/:id',
      operationId: 'getLeadImport',
      summary: 'An import and its progress',
      tag: 'Leads',
      scope: 'read',
      params: idParamSchema('imp'),
      answer: {
        description: 'The import',
        schema: leadImportSchema,
        example: completedLeadImportExample,
      },
      errors: { 404: 'resource_not_found: no such import in this account' },
      name: 'import',
      find: (tenantId, id, livemode) => deps.stores.leadImports.get(tenantId, id, livemode),
      render: renderLeadImport,
    }),
    defineGetRoute({
      path: '/leads/:id',
      operationId: 'getLead',
      summary: 'Get a lead',
      tag: 'Leads',
      scope: 'read',
      params: idParamSchema('lead'),
      answer: { description: 'The lead', schema: leadSchema, example: leadExample },
      errors: { 404: 'resource_not_found: no such lead in this account' },
      name: 'lead',
      find: (tenantId, id, livemode) => deps.stores.leads.get(deps.knex, tenantId, id, livemode),
      render: renderLead,
      version: (lead) => lead.version,
    }),
    defineRoute({
      method: 'patch',
      path: '/leads/:id',
      operationId: 'updateLead',
      summary: 'Update a lead (emits lead.updated naming the fields that changed, if any did)',
      tag: 'Leads',
      scope: 'write',
      description:
        'With If-Match, the change applies only to the version it names (docs/API.md, ' +
        'Conditional edits).',
      params: idParamSchema('lead'),
      headers: [ifMatchHeaderDoc],
      body: updateLeadBodySchema,
      bodyExample: updateLeadExample,
      responses: {
        200: {
          description: 'The lead',
          schema: leadSchema,
          example: { ...leadExample, ...updateLeadExample, updated_at: '2026-11-22T08:00:00.000Z' },
          headers: etagHeaderDoc,
        },
      },
      errors: {
        404: 'resource_not_found: no such lead, or receptionist_id is not one of yours',
        409: LEAD_EXISTS,
        412: PRECONDITION_FAILED_DOC,
      },
      handler: async (req, res) => {
        const id = req.valid.params.id as string;
        const body = req.valid.body as UpdateLeadBody;
        const { tenantId, livemode } = req.auth;
        const lead = await updateLeadFor(deps, tenantId, livemode, id, body, ifMatchOf(req));
        sendVersioned(res, lead.version, renderLead(lead));
      },
    }),
  ];
}
