import { PORTAL_CAPABILITIES } from '@switchboard/db';
import { idParamSchema, nullableTimestamp, timestamp } from '../../shared/schemas';

const capabilities = {
  type: 'array',
  items: { enum: PORTAL_CAPABILITIES },
  uniqueItems: true,
} as const;

/** Body of POST /portal/sessions (docs/API.md, Tenant portal). */
export const createPortalSessionBodySchema = {
  title: 'PortalSessionCreate',
  type: 'object',
  additionalProperties: false,
  properties: {
    capabilities: {
      ...capabilities,
      minItems: 1,
      description:
        'What the page may do; default view, manage_endpoints, recover (view is always granted)',
      'x-error-message': `capabilities must be a non-empty list of ${PORTAL_CAPABILITIES.join(', ')}`,
    },
    ttl_seconds: {
      type: 'integer',
      minimum: 300,
      maximum: 86400,
      description: 'How long the link and its token live, 300 to 86400 (default 3600)',
    },
    subscription_ids: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      uniqueItems: true,
      items: { type: 'string', format: 'uuid' },
      description: 'Limit the page to these subscriptions of the tenant (default: all)',
    },
  },
} as const;

export const createPortalSessionBodyExample = {
  capabilities: ['view', 'manage_endpoints', 'recover'],
  ttl_seconds: 3600,
};

export const portalSessionSchema = {
  title: 'PortalSession',
  type: 'object',
  required: ['id', 'url', 'expires_at', 'capabilities'],
  properties: {
    id: { type: 'string', pattern: '^ps_' },
    url: { type: 'string', description: 'The link: `<base>/portal#code=<one-use code>`' },
    expires_at: timestamp,
    capabilities,
  },
} as const;

export const portalSessionExample = {
  id: 'ps_5b0c1f0e8e4e4c3c9b7f3f5a2d1e6c7b',
  url: 'https://api.example.com/portal#code=pc_3f2a…',
  expires_at: '2026-11-21T11:15:00.000Z',
  capabilities: ['view', 'manage_endpoints', 'recover'],
};

/** A live session as GET /portal/sessions lists it: never its code or token. */
export const livePortalSessionSchema = {
  title: 'LivePortalSession',
  type: 'object',
  required: [
    'id',
    'created_by_key_id',
    'capabilities',
    'subscription_ids',
    'created_at',
    'expires_at',
    'last_used_at',
  ],
  properties: {
    id: { type: 'string', pattern: '^ps_' },
    created_by_key_id: {
      type: ['string', 'null'],
      description:
        'The API key that created it (revoking that key ends the session); null for a ' +
        'session the operator CLI created (`portal link`) or one created before creators ' +
        'were recorded',
    },
    capabilities,
    subscription_ids: {
      type: ['array', 'null'],
      items: { type: 'string', format: 'uuid' },
      description: 'null: every subscription of the tenant',
    },
    created_at: timestamp,
    expires_at: timestamp,
    last_used_at: {
      ...nullableTimestamp,
      description: 'When its token last made a request (to the minute); null: not yet',
    },
  },
} as const;

export const livePortalSessionExample = {
  id: 'ps_5b0c1f0e8e4e4c3c9b7f3f5a2d1e6c7b',
  created_by_key_id: 'key_8f3a2c1d9e0b4a7c6d5e4f3a2b1c0d9e',
  capabilities: ['view', 'manage_endpoints', 'recover'],
  subscription_ids: null,
  created_at: '2026-11-21T10:15:00.000Z',
  expires_at: '2026-11-21T11:15:00.000Z',
  last_used_at: '2026-11-21T10:42:00.000Z',
};

/**
 * DELETE /portal/sessions takes no query: a parameter (a filter someone expected, a typo) is a
 * 400 rather than a revocation of every session.
 */
export const revokeAllQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {},
} as const;

/** The answer of DELETE /portal/sessions (docs/decisions/0087-ending-portal-sessions.md). */
export const portalSessionsRevokedSchema = {
  title: 'PortalSessionsRevoked',
  type: 'object',
  required: ['revoked'],
  properties: {
    revoked: {
      type: 'integer',
      minimum: 0,
      description: 'How many live sessions this ended (0 when there were none)',
    },
  },
} as const;

export const exchangeBodySchema = {
  title: 'PortalCodeExchange',
  type: 'object',
  required: ['code'],
  additionalProperties: false,
  properties: { code: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export const exchangeBodyExample = { code: 'pc_3f2a9d0c7b6e4f1a8c5d2e9b0a7f6c3d' };

export const portalTokenSchema = {
  title: 'PortalToken',
  type: 'object',
  required: ['token', 'expires_at', 'capabilities', 'tenant_name'],
  properties: {
    token: { type: 'string', pattern: '^pt_', description: 'Send as Authorization: Bearer' },
    expires_at: timestamp,
    capabilities,
    tenant_name: { type: 'string' },
    subscription_ids: {
      type: ['array', 'null'],
      items: { type: 'string', format: 'uuid' },
      description: 'null: every subscription of the tenant',
    },
  },
} as const;

export const portalTokenExample = {
  token: 'pt_9c1e0b7a5d3f2e8c6a4b1d0f9e7c5a3b',
  expires_at: '2026-11-21T11:15:00.000Z',
  capabilities: ['view', 'manage_endpoints', 'recover'],
  tenant_name: 'Acme Dental',
  subscription_ids: null,
};

export const portalSessionParamSchema = idParamSchema('ps');

const nullableMs = { type: ['integer', 'null'], minimum: 0 } as const;

export const webhookStatsSchema = {
  title: 'WebhookStats',
  type: 'object',
  required: ['subscription_id', 'since', 'until', 'bucket_seconds', 'totals', 'buckets'],
  properties: {
    subscription_id: { type: 'string', format: 'uuid' },
    since: timestamp,
    until: timestamp,
    bucket_seconds: { const: 60 },
    totals: {
      type: 'object',
      required: ['succeeded', 'failed', 'p50_ms', 'p99_ms'],
      properties: {
        succeeded: { type: 'integer', minimum: 0 },
        failed: { type: 'integer', minimum: 0 },
        p50_ms: nullableMs,
        p99_ms: nullableMs,
      },
    },
    buckets: {
      type: 'array',
      description: 'Minutes with activity, oldest first (minutes without any are left out)',
      items: {
        type: 'object',
        required: ['start', 'succeeded', 'failed', 'p50_ms', 'p99_ms'],
        properties: {
          start: timestamp,
          succeeded: { type: 'integer', minimum: 0 },
          failed: { type: 'integer', minimum: 0 },
          p50_ms: nullableMs,
          p99_ms: nullableMs,
        },
      },
    },
  },
} as const;

export const webhookStatsExample = {
  subscription_id: '3f1c2a9e-6b7d-4e8f-9a0b-1c2d3e4f5a6b',
  since: '2026-11-20T10:15:00.000Z',
  until: '2026-11-21T10:15:00.000Z',
  bucket_seconds: 60,
  totals: { succeeded: 42, failed: 3, p50_ms: 84, p99_ms: 910 },
  buckets: [
    { start: '2026-11-21T10:14:00.000Z', succeeded: 5, failed: 1, p50_ms: 80, p99_ms: 640 },
  ],
};
