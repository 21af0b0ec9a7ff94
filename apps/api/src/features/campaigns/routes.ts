import type { Deps } from '../../deps';
import { defineCreateRoute, defineGetRoute } from '../../shared/resource-routes';
import { defineRoute, type RouteDef } from '../../openapi/route';
import {
  etagHeaderDoc,
  ifMatchHeaderDoc,
  ifMatchOf,
  PRECONDITION_FAILED_DOC,
  sendVersioned,
} from '../../http/if-match';
import { idParamSchema } from '../../shared/schemas';
import { cancelCampaign } from './cancel-campaign';
import { createCampaign } from './create-campaign';
import { campaignRecipientsRoute } from './recipients';
import { renderCampaign, withReceipts } from './render';
import {
  campaignSchema,
  canceledCampaignExample,
  createCampaignBodySchema,
  createCampaignExample,
  queuedCampaignExample,
  runningCampaignExample,
  type CreateCampaignBody,
} from './schemas';
import { defineListRoute } from '../../pagination/list-route';

/** SMS campaigns (docs/API.md, Campaigns): create, list, read, recipients, cancel. */
export function campaignRoutes(deps: Deps): RouteDef[] {
  const { campaigns } = deps.stores;
  return [
    defineCreateRoute<CreateCampaignBody>(deps.idempotency, {
      path: '/campaigns',
      operationId: 'createCampaign',
      summary: 'Send an SMS to a list of leads or numbers at a steady rate',
      description:
        'The recipients are resolved when the campaign is accepted (deduplicated by phone; ' +
        'leads without a phone are skipped), so `recipients` in the answer is final. The ' +
        'workers then send one SMS per recipient at `send_rate_per_minute` (each an SMS ' +
        'with `campaign_id` and its own `sms.sent`), skip recipients who opted out, and emit ' +
        '`campaign.completed` once every recipient is done.',
      tag: 'Campaigns',
      scope: 'write',
      body: createCampaignBodySchema,
      bodyExample: createCampaignExample,
      status: 202,
      answer: {
        description: 'The campaign is queued; watch its counters or wait for campaign.completed',
        schema: campaignSchema,
        example: queuedCampaignExample,
        location: 'The campaign: /api/v1/campaigns/{id}',
      },
      errors: {
        400:
          'no_recipients: the recipients resolve to no phone number; too_many_recipients: ' +
          'a lead_filter matches more than 10,000 leads with a phone (param recipients); ' +
          'invalid_parameter on message when {{name}} rendered with the longest recipient ' +
          'name exceeds 1600 characters',
        404:
          'resource_not_found: receptionist_id, or one of recipients.lead_ids, is not of ' +
          'this account',
        409:
          'receptionist_not_ready; or idempotency_request_in_progress (Retry-After: 1) while ' +
          'the first request with this Idempotency-Key runs',
        422: 'idempotency_key_reused: the key was used with another body',
      },
      create: (tenantId, body, scope, auth) =>
        createCampaign(deps, tenantId, body, scope, auth.livemode),
    }),
    defineListRoute({
      path: '/campaigns',
      operationId: 'listCampaigns',
      summary: 'List campaigns, newest first',
      tag: 'Campaigns',
      scope: 'read',
      description: 'A page of campaigns',
      itemSchema: campaignSchema,
      itemExample: runningCampaignExample,
      family: 'campaigns',
      cursors: deps.cursors,
      list: async (tenantId, page, auth) => {
        const result = await campaigns.list(tenantId, page, auth.livemode);
        return { rows: await withReceipts(deps, result.rows), next: result.next };
      },
      render: renderCampaign,
    }),
    defineGetRoute({
      path: '/campaigns/:id',
      operationId: 'getCampaign',
      summary: 'Get a campaign and its counters',
      tag: 'Campaigns',
      scope: 'read',
      params: idParamSchema('cmp'),
      answer: {
        description: 'The campaign',
        schema: campaignSchema,
        example: runningCampaignExample,
      },
      errors: { 404: 'resource_not_found: no such campaign in this account' },
      name: 'campaign',
      find: (tenantId, id, livemode) => campaigns.get(tenantId, id, livemode),
      render: async (found) => {
        const [withCounts] = await withReceipts(deps, [found]);
        return renderCampaign(withCounts ?? { ...found, delivered: 0, undelivered: 0 });
      },
      version: (found) => found.version,
    }),
    campaignRecipientsRoute(deps),
    defineRoute({
      method: 'post',
      path: '/campaigns/:id/cancel',
      operationId: 'cancelCampaign',
      summary: 'Cancel a queued or running campaign: nothing more is sent, nothing is emitted',
      description:
        'With If-Match, only the version it names is canceled (docs/API.md, Conditional ' +
        "edits): a campaign's version changes when it is canceled, not as it is sent.",
      tag: 'Campaigns',
      scope: 'write',
      params: idParamSchema('cmp'),
      headers: [ifMatchHeaderDoc],
      responses: {
        200: {
          description: 'The canceled campaign with its counters',
          schema: campaignSchema,
          example: canceledCampaignExample,
          headers: etagHeaderDoc,
        },
      },
      errors: {
        404: 'resource_not_found: no such campaign in this account',
        409: 'invalid_state: the campaign is completed or canceled already',
        412: PRECONDITION_FAILED_DOC,
      },
      handler: async (req, res) => {
        const id = req.valid.params.id as string;
        const { tenantId, livemode } = req.auth;
        const canceled = await cancelCampaign(deps, tenantId, livemode, id, ifMatchOf(req));
        sendVersioned(res, canceled.version, canceled.body);
      },
    }),
  ];
}
