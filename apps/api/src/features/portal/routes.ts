import type { FromSchema } from 'json-schema-to-ts';
import {
  grantPortalCapabilities,
  type PortalCapability,
  type PortalSession,
} from '@switchboard/db';
import type { Deps } from '../../deps';
import { notFound, unauthenticated } from '../../errors';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { defineListRoute } from '../../pagination/list-route';
import {
  createPortalSessionBodyExample,
  createPortalSessionBodySchema,
  exchangeBodyExample,
  exchangeBodySchema,
  livePortalSessionExample,
  livePortalSessionSchema,
  portalSessionExample,
  portalSessionParamSchema,
  portalSessionSchema,
  portalSessionsRevokedSchema,
  portalTokenExample,
  portalTokenSchema,
  revokeAllQuerySchema,
} from './schemas';

type CreateBody = FromSchema<typeof createPortalSessionBodySchema>;
type ExchangeBody = FromSchema<typeof exchangeBodySchema>;

const TAG = 'Portal';

/** The refusal's message says why (the page words its error page from it). */
const REFUSALS = {
  used: 'This portal link was already used; ask for a new one',
  expired: 'This portal link expired or was revoked; ask for a new one',
  unknown: 'This portal link is not valid; ask for a new one',
} as const;

/** A live session as listed: never its code or token (only their hashes are stored anyway). */
const renderLive = (s: PortalSession) => ({
  id: s.id,
  created_by_key_id: s.createdByKeyId,
  capabilities: s.capabilities,
  subscription_ids: s.subscriptionIds,
  created_at: s.createdAt.toISOString(),
  expires_at: s.expiresAt.toISOString(),
  last_used_at: s.lastUsedAt?.toISOString() ?? null,
});

/** Portal sessions (docs/API.md, Tenant portal): an admin makes a link, the page trades it. */
export function portalRoutes(deps: Deps): RouteDef[] {
  const sessions = deps.stores.portalSessions;
  return [
    defineRoute({
      method: 'post',
      path: '/portal/sessions',
      operationId: 'createPortalSession',
      summary: 'Create a portal link for this tenant (one-use code, limited capabilities)',
      description:
        'Hand `url` to the people who manage this tenant’s webhooks: the page trades its ' +
        'one-use code for a portal token and needs no API key. `subscription_ids` limits the ' +
        'page to those subscriptions (it then cannot create new ones).',
      tag: TAG,
      scope: 'admin',
      body: createPortalSessionBodySchema,
      bodyExample: createPortalSessionBodyExample,
      responses: {
        201: {
          description: 'The session and its link (the code is shown only here)',
          schema: portalSessionSchema,
          example: portalSessionExample,
        },
      },
      errors: { 404: 'resource_not_found: a subscription_ids entry is not in this tenant' },
      handler: async (req, res) => {
        const body = req.valid.body as CreateBody;
        const tenantId = req.auth.tenantId;
        const ids = body.subscription_ids?.map((id) => id.toLowerCase()) ?? null;
        for (const id of ids ?? []) {
          if (!(await deps.stores.webhookSubscriptions.get(tenantId, id))) {
            throw notFound('webhook subscription', 'subscription_ids');
          }
        }
        const { session, code } = await sessions.create({
          tenantId,
          // The session ends when this key is revoked (PortalSessionsStore, LIVE).
          createdByKeyId: req.auth.keyId,
          capabilities: grantPortalCapabilities(
            body.capabilities as PortalCapability[] | undefined,
          ),
          subscriptionIds: ids,
          ttlSeconds: body.ttl_seconds ?? 3600,
        });
        const base = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
        res.status(201).json({
          id: session.id,
          url: `${base}/portal#code=${code}`,
          expires_at: session.expiresAt.toISOString(),
          capabilities: session.capabilities,
        });
      },
    }),
    defineListRoute({
      path: '/portal/sessions',
      operationId: 'listPortalSessions',
      summary: 'List the live portal sessions of this tenant, newest first',
      tag: TAG,
      scope: 'admin',
      description:
        'A page of sessions that are not revoked, not expired and whose creator key is not revoked',
      itemSchema: livePortalSessionSchema,
      itemExample: livePortalSessionExample,
      family: 'portal-sessions',
      cursors: deps.cursors,
      list: (tenantId, page) => sessions.listLive(tenantId, page),
      render: renderLive,
    }),
    defineRoute({
      method: 'delete',
      path: '/portal/sessions',
      operationId: 'revokeAllPortalSessions',
      summary: 'Revoke every portal session of this tenant: their tokens stop working at once',
      description:
        'Ends every live session, whichever key created it; links not traded yet stop ' +
        'working too. Answers how many it ended (0 when none were live; calling again is harmless).',
      tag: TAG,
      scope: 'admin',
      query: revokeAllQuerySchema,
      responses: {
        200: {
          description: 'How many sessions were revoked',
          schema: portalSessionsRevokedSchema,
          example: { revoked: 2 },
        },
      },
      handler: async (req, res) => {
        res.json({ revoked: await sessions.revokeAll(req.auth.tenantId) });
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/portal/sessions/:id',
      operationId: 'revokePortalSession',
      summary: 'Revoke a portal session: its link and token stop working at once',
      tag: TAG,
      scope: 'admin',
      params: portalSessionParamSchema,
      responses: { 204: { description: 'Revoked (revoking twice is harmless)' } },
      errors: { 404: 'resource_not_found: no such portal session in this tenant' },
      handler: async (req, res) => {
        const revoked = await sessions.revoke(req.auth.tenantId, String(req.valid.params.id));
        if (!revoked) throw notFound('portal session', 'id');
        res.status(204).end();
      },
    }),
    defineRoute({
      method: 'post',
      path: '/portal/exchange',
      operationId: 'exchangePortalCode',
      summary: 'Trade a portal link’s one-use code for a portal token (no API key)',
      description:
        'The portal page calls this with the code of its link. The token is sent as ' +
        '`Authorization: Bearer pt_…` and is accepted only on the webhook routes its ' +
        'capabilities allow (see `x-portal-capability`), until the session expires or is revoked.',
      tag: TAG,
      scope: null,
      addressLimited: true,
      body: exchangeBodySchema,
      bodyExample: exchangeBodyExample,
      responses: {
        200: {
          description: 'The portal token and what it may do',
          schema: portalTokenSchema,
          example: portalTokenExample,
        },
      },
      errors: {
        401: 'invalid_portal_code: the code is unknown, used already, or expired',
        429: 'rate_limited: too many requests without a valid credential from this address',
      },
      handler: async (req, res) => {
        // No key here: the address's bucket of requests without a credential applies.
        await deps.anonymousLimits.count(req);
        const { code } = req.valid.body as ExchangeBody;
        const traded = await sessions.exchange(code);
        if (!traded) {
          const why = await sessions.refusalOf(code);
          throw unauthenticated('invalid_portal_code', REFUSALS[why]);
        }
        const { session, token } = traded;
        res.json({
          token,
          expires_at: session.expiresAt.toISOString(),
          capabilities: session.capabilities,
          tenant_name: session.tenantName,
          subscription_ids: session.subscriptionIds,
        });
      },
    }),
  ];
}
