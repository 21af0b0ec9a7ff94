import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { etagOf, Switchboard, SwitchboardError } from '@switchboard/sdk';
import { createTestContext, type TestContext } from '../support/context';
import { addReceptionist } from '../support/receptionist';
import { fakeLookup } from '../support/webhooks';

// The SDK's `ifMatch` and `etagOf` against the real API (docs/API.md, Conditional edits):
// the ETag of a read goes back as If-Match; a stale one throws the 412 with the current ETag.
let ctx: TestContext;
let server: Server;
let client: Switchboard;
let tenantId: string;

beforeAll(async () => {
  ctx = await createTestContext(
    {},
    { webhookLookup: fakeLookup({ 'hooks.example.test': ['93.184.215.14'] }) },
  );
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const tenant = await ctx.tenant(['admin']);
  tenantId = tenant.tenantId;
  client = new Switchboard({
    apiKey: tenant.key,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    retry: { maxRetries: 0 },
  });
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await ctx?.close();
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => {
      expect(e).toBeInstanceOf(SwitchboardError);
      return e as SwitchboardError;
    },
  );

test('webhooks: update and delete with ifMatch; a stale ETag throws 412', async () => {
  const { id } = await client.webhooks.create({ url: 'https://hooks.example.test/in' });
  const read = await client.webhooks.get(id);
  const first = etagOf(read);
  expect(first).toMatch(/^W\/"\d+"$/);

  const updated = await client.webhooks.update(id, { description: 'one' }, { ifMatch: first });
  expect(updated.description).toBe('one');
  expect(etagOf(updated)).not.toBe(first);

  const stale = await failure(client.webhooks.pause(id, { ifMatch: first }));
  expect(stale).toMatchObject({ status: 412, code: 'precondition_failed' });
  expect(stale.headers?.get('etag')).toBe(etagOf(updated));
  expect((await client.webhooks.get(id)).is_active).toBe(true);

  expect((await failure(client.webhooks.delete(id, { ifMatch: first }))).status).toBe(412);
  await client.webhooks.delete(id, { ifMatch: etagOf(updated) });
  expect((await failure(client.webhooks.get(id))).status).toBe(404);
});

test('receptionists, leads and campaigns take ifMatch too', async () => {
  const rcp = await addReceptionist(ctx, tenantId, { phoneNumber: '+14155550100' });
  const desk = await client.receptionists.get(rcp);
  await client.receptionists.update(rcp, { name: 'Desk 2' }, { ifMatch: etagOf(desk) });
  const again = await failure(
    client.receptionists.update(rcp, { name: 'Desk 3' }, { ifMatch: etagOf(desk) }),
  );
  expect(again.code).toBe('precondition_failed');

  const lead = await client.leads.create({ name: 'Dana', phone: '+14155550177' });
  const read = await client.leads.get(lead.id);
  const changed = await client.leads.update(lead.id, { notes: 'x' }, { ifMatch: etagOf(read) });
  expect(changed.notes).toBe('x');
  expect(
    (await failure(client.leads.update(lead.id, { notes: 'y' }, { ifMatch: etagOf(read) }))).code,
  ).toBe('precondition_failed');

  const campaign = await client.campaigns.create({
    name: 'Spring',
    receptionist_id: rcp,
    message: 'Hello',
    recipients: { phones: ['+14155550123'] },
  });
  const queued = await client.campaigns.get(campaign.id);
  const canceled = await client.campaigns.cancel(campaign.id, { ifMatch: etagOf(queued) });
  expect(canceled.status).toBe('canceled');
  expect(
    (await failure(client.campaigns.cancel(campaign.id, { ifMatch: etagOf(queued) }))).status,
  ).toBe(412);
});

test('an object no read returned has no ETag (an item of a list)', async () => {
  await client.webhooks.create({ url: 'https://hooks.example.test/listed' });
  const [item] = await client.webhooks.list().toArray();
  expect(item).toBeDefined();
  expect(etagOf(item as object)).toBeUndefined();
});
