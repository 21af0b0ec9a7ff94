import request from 'supertest';
import type { Scope } from '@switchboard/db';
import { closedPort } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { messages, uid } from '../support/fixtures';
import { addReceptionist } from '../support/receptionist';
import { fanOut } from '../support/fan-out';

/** The kinds of resource an operation's path can name. */
export type Kind =
  | 'receptionist'
  | 'call'
  | 'sms'
  | 'lead'
  | 'leadImport'
  | 'campaign'
  | 'webhook'
  | 'delivery'
  | 'recovery'
  | 'portalSession'
  | 'event';

/**
 * For every operation with a path parameter: which kind of resource each parameter names, so
 * the sweeps can put a real id of the right kind there (their own tenant's, or another's).
 * An operation with a path parameter that is missing here fails test/sweeps/isolation.test.ts,
 * which says what to add: an entry here, and a creator in CREATORS for a new kind.
 */
export const PATH_ID_KINDS: Readonly<Record<string, Readonly<Record<string, Kind>>>> = {
  getReceptionist: { id: 'receptionist' },
  updateReceptionist: { id: 'receptionist' },
  provisionReceptionist: { id: 'receptionist' },
  listReceptionistCalls: { id: 'receptionist' },
  listReceptionistSms: { id: 'receptionist' },
  getCall: { id: 'call' },
  getSms: { id: 'sms' },
  cancelSms: { id: 'sms' },
  getLead: { id: 'lead' },
  updateLead: { id: 'lead' },
  getLeadImport: { id: 'leadImport' },
  getCampaign: { id: 'campaign' },
  listCampaignRecipients: { id: 'campaign' },
  cancelCampaign: { id: 'campaign' },
  getWebhook: { id: 'webhook' },
  deleteWebhook: { id: 'webhook' },
  testWebhook: { id: 'webhook' },
  enableWebhook: { id: 'webhook' },
  updateWebhook: { id: 'webhook' },
  rotateWebhookSecret: { id: 'webhook' },
  getWebhookDelivery: { id: 'webhook', delivery_id: 'delivery' },
  recoverWebhook: { id: 'webhook' },
  getWebhookRecovery: { id: 'webhook', recovery_id: 'recovery' },
  listWebhookDeliveries: { id: 'webhook' },
  retryWebhookDelivery: { id: 'webhook', delivery_id: 'delivery' },
  getWebhookStats: { id: 'webhook' },
  revokePortalSession: { id: 'portalSession' },
  getEvent: { id: 'event' },
};

/** One tenant of a sweep: its keys (one per scope) and one resource of every kind. */
export interface TenantWorld {
  tenantId: string;
  /** `Bearer …` of a key with exactly that scope. */
  keys: Record<Scope, string>;
  /** A revoked key of the tenant. */
  revoked: string;
  /** `Bearer pt_…` of portal sessions: every capability, and `view` only. */
  portal: { full: string; view: string };
  ids: Record<Kind, string>;
  /** Real cursors of the tenant's lists (next pages). */
  cursors: string[];
}

export interface World {
  /** The tenant whose keys the sweeps use. */
  own: TenantWorld;
  /** Another tenant: its ids must be invisible to `own`. */
  foreign: TenantWorld;
  /** A TCP port on 127.0.0.1 that refuses connections (webhook URLs point there). */
  closedPort: number;
}

interface Making {
  ctx: TestContext;
  tenantId: string;
  admin: string;
  port: number;
  ids: Partial<Record<Kind, string>>;
  phone: string;
}

const ok = (res: request.Response, status: number, what: string): request.Response => {
  if (res.status !== status) {
    throw new Error(`making ${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }
  return res;
};
const api = (m: Making) => ({
  post: (path: string, body: object) =>
    request(m.ctx.app).post(`/api/v1${path}`).set('Authorization', m.admin).send(body),
  get: (path: string) => request(m.ctx.app).get(`/api/v1${path}`).set('Authorization', m.admin),
});
const ingest = (m: Making, message: object) =>
  request(m.ctx.app)
    .post('/internal/v1/telephony/events')
    .set('Authorization', `Bearer ${m.ctx.config.ingestToken}`)
    .send(message);

/**
 * How to make one resource of each kind for a tenant, in this order (later kinds use
 * earlier ones), through the API wherever the API can make it. A new kind of resource with
 * an id in a path needs a creator here (and its operations an entry in PATH_ID_KINDS).
 */
export const CREATORS: ReadonlyArray<readonly [Kind, (m: Making) => Promise<string>]> = [
  [
    'receptionist',
    // Provisioning runs in the worker; a ready one comes straight from the store.
    (m) => addReceptionist(m.ctx, m.tenantId, { phoneNumber: m.phone }),
  ],
  [
    'webhook',
    async (m) => {
      const url = `https://127.0.0.1:${m.port}/hook`;
      await ok(await api(m).post('/webhooks', { url }), 201, 'a webhook');
      return ok(await api(m).post('/webhooks', { url }), 201, 'a webhook').body.id as string;
    },
  ],
  [
    'call',
    async (m) => {
      // Two calls (a next page exists); each also emits events for the webhook above.
      for (let i = 0; i < 2; i++) {
        const at = new Date(Date.now() - (i + 2) * 60_000).toISOString();
        const ended = new Date(Date.now() - (i + 1) * 60_000).toISOString();
        const started = messages.started(m.ids.receptionist as string, uid(), at);
        ok(await ingest(m, started), 202, 'a call');
        const end = messages.ended(
          m.ids.receptionist as string,
          started.provider_call_id,
          at,
          ended,
        );
        ok(await ingest(m, end), 202, 'a call');
      }
      return ok(await api(m).get('/calls?limit=1'), 200, 'a call').body.calls[0].id as string;
    },
  ],
  [
    'event',
    // The calls above emitted events: the newest, as the event log lists it.
    async (m) => ok(await api(m).get('/events?limit=1'), 200, 'an event').body.data[0].id as string,
  ],
  [
    'delivery',
    async (m) => {
      const knex = m.ctx.deps.knex;
      const events = await knex('events').where({ tenant_id: m.tenantId }).select('id');
      for (const e of events) await fanOut(knex, [e.id as string]);
      const row = await knex('webhook_deliveries')
        .where({ tenant_id: m.tenantId, subscription_id: m.ids.webhook })
        .first('id');
      if (!row) throw new Error('making a delivery: fan-out made none');
      return row.id as string;
    },
  ],
  [
    'portalSession',
    async (m) =>
      ok(await api(m).post('/portal/sessions', {}), 201, 'a portal session').body.id as string,
  ],
  [
    'sms',
    async (m) =>
      ok(
        await api(m).post('/sms/send', {
          receptionist_id: m.ids.receptionist,
          to: '+14155550123',
          message: 'Your boiler service is booked for Tuesday.',
        }),
        202,
        'an SMS',
      ).body.id as string,
  ],
  [
    'lead',
    async (m) => {
      await api(m).post('/leads', { name: 'Ada Lovelace', phone: '+14155550140' });
      return ok(
        await api(m).post('/leads', { name: 'Dana Whitfield', phone: '+14155550141' }),
        201,
        'a lead',
      ).body.id as string;
    },
  ],
  [
    'leadImport',
    async (m) =>
      ok(
        await request(m.ctx.app)
          .post('/api/v1/leads/import')
          .set('Authorization', m.admin)
          .set('Content-Type', 'text/csv')
          .send('name,phone\nGrace Hopper,+14155550150\n'),
        202,
        'a lead import',
      ).body.id as string,
  ],
  [
    'campaign',
    async (m) =>
      ok(
        await api(m).post('/campaigns', {
          name: 'Spring check-up',
          receptionist_id: m.ids.receptionist,
          message: 'Hi {{name}}, time for your spring check-up. Reply STOP to opt out.',
          recipients: { phones: ['+14155550160', '+14155550161'] },
        }),
        202,
        'a campaign',
      ).body.id as string,
  ],
  [
    'recovery',
    async (m) => {
      // A finished recovery of the webhook above (a running one would block new ones).
      const id = `rec_${uid().replace(/[^A-Za-z0-9]/g, '')}`;
      await m.ctx.deps.knex('webhook_recoveries').insert({
        id,
        tenant_id: m.tenantId,
        subscription_id: m.ids.webhook,
        since: new Date(Date.now() - 3_600_000),
        until: new Date(),
        status: 'completed',
        completed_at: new Date(),
      });
      return id;
    },
  ],
];

let phones = 0;

async function tenantWorld(ctx: TestContext, port: number): Promise<TenantWorld> {
  const { tenantId, auth: admin } = await ctx.tenant(['admin']);
  // The sweeps send thousands of requests a minute with these keys: the per-key limit is
  // tested on its own (test/api/rate-limits.test.ts), here it must not be what answers.
  await ctx.deps.stores.tenants.setRateLimit(tenantId, { perSecond: 100_000, burst: 100_000 });
  const m: Making = {
    ctx,
    tenantId,
    admin,
    port,
    ids: {},
    phone: `+1415555${String(2000 + phones++).padStart(4, '0')}`,
  };
  for (const [kind, make] of CREATORS) m.ids[kind] = await make(m);
  const revoked = await ctx.keyFor(tenantId, ['admin']);
  await ctx.deps.stores.apiKeys.revoke(revoked.id);
  const portalToken = async (capabilities: string[]): Promise<string> => {
    const url = ok(await api(m).post('/portal/sessions', { capabilities }), 201, 'a portal link')
      .body.url as string;
    const code = url.split('#code=')[1];
    const traded = await request(ctx.app).post('/api/v1/portal/exchange').send({ code });
    return `Bearer ${ok(traded, 200, 'a portal token').body.token as string}`;
  };
  const portal = {
    full: await portalToken(['view', 'manage_endpoints', 'manage_secrets', 'recover']),
    view: await portalToken(['view']),
  };
  const cursors: string[] = [];
  for (const path of [
    '/calls?limit=1',
    '/webhooks?limit=1',
    '/leads/search?limit=1',
    '/events?limit=1',
  ]) {
    const body = ok(await api(m).get(path), 200, 'a cursor').body;
    const cursor = body.next_cursor ?? body.cursor;
    if (typeof cursor === 'string') cursors.push(cursor);
  }
  return {
    tenantId,
    keys: {
      read: (await ctx.keyFor(tenantId, ['read'])).auth,
      write: (await ctx.keyFor(tenantId, ['write'])).auth,
      admin,
    },
    revoked: revoked.auth,
    portal,
    ids: m.ids as Record<Kind, string>,
    cursors,
  };
}

/** Two tenants with one resource of every kind each. */
export async function buildWorld(ctx: TestContext): Promise<World> {
  const port = await closedPort();
  return {
    own: await tenantWorld(ctx, port),
    foreign: await tenantWorld(ctx, port),
    closedPort: port,
  };
}
