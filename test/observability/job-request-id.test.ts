import request from 'supertest';
import { createLogger } from '@switchboard/logger';
import { createTestContext, type TestContext } from '../support/context';
import { logLines } from '../support/log-lines';
import { receptionistTenant } from '../support/receptionist';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';

// The request id of POST /calls/outbound travels with its dial job: the worker's lines about
// that job carry it as `request_id` (docs/OPERATIONS.md, Logs).
const worker = logLines();
let ctx: TestContext;
let w: TestWorker;
let auth: string;
let rcp: string;

beforeAll(async () => {
  ctx = await createTestContext({ SIMULATOR_SPEED: '1000' });
  ({ auth, rcp } = await receptionistTenant(ctx, { phoneNumber: '+14155550100' }));
  w = await startTestWorker(ctx, { logger: createLogger('worker', 'debug', worker.sink) });
});
afterAll(async () => {
  await w?.close();
  await ctx?.close();
});

const dialLine = (callId: string) =>
  waitFor(`the worker's dialling line of ${callId}`, () =>
    worker.lines.find((l) => l.call_id === callId && l.msg === 'dialling'),
  );

test("the worker's line about a dial carries the request id the client sent", async () => {
  const id = 'crm-dial:7f3a.1';
  const res = await request(ctx.app)
    .post('/api/v1/calls/outbound')
    .set('Authorization', auth)
    .set('X-Request-Id', id)
    .send({ receptionist_id: rcp, to: '+14155550123' })
    .expect(202);
  expect(res.headers['x-request-id']).toBe(id);
  expect(await dialLine(res.body.id as string)).toMatchObject({
    name: 'worker',
    queue: 'outbound-calls',
    request_id: id,
  });
});

test('and the id the API made when the client sent none', async () => {
  const res = await request(ctx.app)
    .post('/api/v1/calls/outbound')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to: '+14155550123' })
    .expect(202);
  const id = res.headers['x-request-id'] as string;
  expect(id).toMatch(/^req_/);
  expect(await dialLine(res.body.id as string)).toMatchObject({ request_id: id });
});
