import {
  RECIPIENT_OUTCOMES,
  type CampaignRecipient,
  type CampaignRecipientOutcome,
} from '@switchboard/db';
import type { Deps } from '../../deps';
import { notFound } from '../../errors';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { pageBody, pageRequest } from '../../pagination/page';
import {
  cursorSchema,
  idParamSchema,
  limitSchema,
  nullableTimestamp,
  pageExample,
  paginated,
  timestamp,
} from '../../shared/schemas';

const outcomeSchema = {
  enum: RECIPIENT_OUTCOMES,
  description:
    'pending (not sent yet), sending (handed to the carrier), sent (accepted, no receipt ' +
    'yet), delivered or undelivered (the carrier’s receipt), failed, opted_out (replied ' +
    'STOP), skipped (texted by another campaign within the repeat window), canceled ' +
    '(the campaign was canceled before its turn)',
} as const;

const recipientSchema = {
  title: 'CampaignRecipient',
  type: 'object',
  required: ['phone', 'lead_id', 'outcome', 'sms_id', 'error_code', 'sent_at', 'updated_at'],
  properties: {
    phone: { type: 'string', description: 'The number texted (E.164)' },
    lead_id: { type: ['string', 'null'], description: 'The lead with this number, if any' },
    outcome: outcomeSchema,
    sms_id: {
      type: ['string', 'null'],
      description: 'The recipient’s message (GET /sms/{id}); null when none was sent',
    },
    error_code: {
      type: ['string', 'null'],
      description: 'Why the message failed or was undelivered (as on the SMS)',
    },
    sent_at: { ...nullableTimestamp, description: 'When the carrier accepted the message' },
    updated_at: { ...timestamp, description: 'When the recipient’s own state last changed' },
  },
} as const;

const recipientsQuerySchema = {
  type: 'object',
  properties: {
    limit: limitSchema,
    cursor: cursorSchema,
    outcome: {
      ...outcomeSchema,
      'x-error-message': `outcome must be one of ${RECIPIENT_OUTCOMES.join(', ')}`,
    },
  },
} as const;

const render = (r: CampaignRecipient) => ({
  phone: r.phone,
  lead_id: r.leadId,
  outcome: r.outcome,
  sms_id: r.smsId,
  error_code: r.errorCode,
  sent_at: r.sentAt?.toISOString() ?? null,
  updated_at: r.updatedAt.toISOString(),
});

/**
 * GET /campaigns/{id}/recipients (docs/API.md, Campaigns): each recipient of the tenant's
 * campaign with its outcome, last in sending order first; another tenant's campaign is a 404.
 */
export function campaignRecipientsRoute(deps: Deps): RouteDef {
  return defineRoute({
    method: 'get',
    path: '/campaigns/:id/recipients',
    operationId: 'listCampaignRecipients',
    summary: 'List a campaign’s recipients and the outcome of each',
    tag: 'Campaigns',
    scope: 'read',
    params: idParamSchema('cmp'),
    query: recipientsQuerySchema,
    responses: {
      200: {
        description: 'A page of recipients',
        schema: paginated(recipientSchema),
        example: pageExample({
          phone: '+14155550123',
          lead_id: 'lead_4Tn8Vb2Qw6Yr',
          outcome: 'delivered',
          sms_id: 'sms_8Kd3Lp0Zs7Xa',
          error_code: null,
          sent_at: '2026-11-21T10:16:02.310Z',
          updated_at: '2026-11-21T10:16:02.310Z',
        }),
      },
    },
    errors: { 404: 'resource_not_found: no such campaign in this account' },
    handler: async (req, res) => {
      const page = pageRequest(req, deps.cursors, 'campaign-recipients');
      const outcome = req.valid.query.outcome as CampaignRecipientOutcome | undefined;
      const result = await deps.stores.campaignRecipients.list(
        req.auth.tenantId,
        req.valid.params.id as string,
        { outcome, livemode: req.auth.livemode },
        page,
      );
      if (!result) throw notFound('campaign', 'id');
      res.json(pageBody(req, deps.cursors, 'campaign-recipients', result, render));
    },
  });
}
