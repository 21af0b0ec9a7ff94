import request from 'supertest';
import { Switchboard } from '@switchboard/sdk';
import { createTestContext, type TestContext } from '../support/context';

// Every operation of the served OpenAPI document is usable from the SDK: each operationId
// maps to one method of one group. MCP is the exception on purpose (MCP clients speak MCP).
// An operation added to the API without an SDK method, or a method named here that the SDK
// lacks, fails this test.
const SDK_METHOD: Record<string, string | null> = {
  listCalls: 'calls.list',
  getCall: 'calls.get',
  startOutboundCall: 'calls.startOutbound',
  listReceptionists: 'receptionists.list',
  createReceptionist: 'receptionists.create',
  getReceptionist: 'receptionists.get',
  updateReceptionist: 'receptionists.update',
  provisionReceptionist: 'receptionists.provision',
  listReceptionistCalls: 'receptionists.listCalls',
  getUsage: 'usage.get',
  sendSms: 'sms.send',
  getSms: 'sms.get',
  cancelSms: 'sms.cancel',
  listSmsOptOuts: 'sms.listOptOuts',
  listReceptionistSms: 'sms.listForReceptionist',
  searchLeads: 'leads.search',
  createLead: 'leads.create',
  importLeads: 'leads.import',
  getLeadImport: 'leads.getImport',
  getLead: 'leads.get',
  updateLead: 'leads.update',
  createCampaign: 'campaigns.create',
  listCampaigns: 'campaigns.list',
  getCampaign: 'campaigns.get',
  listCampaignRecipients: 'campaigns.listRecipients',
  cancelCampaign: 'campaigns.cancel',
  createWebhook: 'webhooks.create',
  listWebhooks: 'webhooks.list',
  getWebhook: 'webhooks.get',
  deleteWebhook: 'webhooks.delete',
  testWebhook: 'webhooks.test',
  enableWebhook: 'webhooks.enable',
  listWebhookDeliveries: 'webhooks.listDeliveries',
  retryWebhookDelivery: 'webhooks.retryDelivery',
  updateWebhook: 'webhooks.update',
  rotateWebhookSecret: 'webhooks.rotateSecret',
  getWebhookDelivery: 'webhooks.getDelivery',
  listTenantWebhookDeliveries: 'webhooks.listAllDeliveries',
  listEventTypes: 'webhooks.eventTypes',
  listEvents: 'events.list',
  getEvent: 'events.get',
  streamEvents: 'events.stream',
  recoverWebhook: 'webhooks.recover',
  getWebhookRecovery: 'webhooks.getRecovery',
  getWebhookStats: 'webhooks.stats',
  createPortalSession: 'portal.createSession',
  revokePortalSession: 'portal.revokeSession',
  listPortalSessions: 'portal.listSessions',
  revokeAllPortalSessions: 'portal.revokeAllSessions',
  exchangePortalCode: 'portal.exchange',
  deleteTestData: 'testData.delete',
  callMcp: null,
};

let ctx: TestContext;
let operationIds: string[];

beforeAll(async () => {
  ctx = await createTestContext();
  const doc = (await request(ctx.app).get('/api/v1/openapi.json')).body as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  operationIds = Object.values(doc.paths).flatMap((item) =>
    Object.values(item).map((op) => op.operationId),
  );
});
afterAll(() => ctx?.close());

it('has an SDK method for every operation of the document (MCP aside)', () => {
  expect([...operationIds].sort()).toEqual(Object.keys(SDK_METHOD).sort());
  const client = new Switchboard({ apiKey: 'sk_live_unused', baseUrl: 'http://127.0.0.1:9' });
  for (const [operationId, method] of Object.entries(SDK_METHOD)) {
    if (method === null) continue;
    const [group, name] = method.split('.') as [string, string];
    const resource = (client as unknown as Record<string, Record<string, unknown>>)[group];
    expect([operationId, method, typeof resource?.[name]]).toEqual([
      operationId,
      method,
      'function',
    ]);
  }
});
