import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import request from 'supertest';
import { startTracing, type Tracing } from '@switchboard/telemetry';
import type { TestContext } from '../support/context';
import { csv } from '../support/leads';
import { subscribedTenant, type SubscribedTenant } from '../support/subscribed-tenant';
import { waitFor } from '../support/wait';
import { startTestWorker, type TestWorker } from '../support/worker';

// One trace per request for the flows that go through a job (docs/OPERATIONS.md, Traces):
// the API request span → the job's span (worker) → the outbox writes of the events the job
// emits → their relay, fan-out and delivery attempts. The API and the worker run in this
// process, their spans kept by an in-memory exporter.
jest.setTimeout(120_000);
const exporter = new InMemorySpanExporter();
let tracing: Tracing | null;
let world: SubscribedTenant;
let ctx: TestContext;
let auth: string;
let tenantId: string;
let rcp: string;
/** The worker of every test; the last test stops it and starts `later`. */
let worker: TestWorker | null = null;
let later: TestWorker | null = null;
const startWorker = () =>
  startTestWorker(ctx, { webhookCa: world.cert.cert, runner: { campaignPollMs: 200 } });

beforeAll(async () => {
  tracing = startTracing({ enabled: true, serviceName: null }, 'switchboard-test', exporter);
  world = await subscribedTenant({
    // Tracing on for the API (its request spans); the spans go to the exporter above.
    env: { SIMULATOR_SPEED: '50', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
    phoneNumber: '+14155550166',
  });
  ({ ctx, auth, tenantId, rcp } = world);
  worker = await startWorker();
}, 120_000);
afterAll(async () => {
  await worker?.close();
  await later?.close();
  await world?.close();
  await tracing?.shutdown();
});

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const idOf = (s: ReadableSpan) => s.spanContext().spanId;
const traceOf = (s: ReadableSpan) => s.spanContext().traceId;

/** The server span of the request that answered with `requestId`. */
const requestSpan = (requestId: string) =>
  waitFor(`the span of request ${requestId}`, () =>
    spans().find((s) => s.attributes['switchboard.request_id'] === requestId),
  );

/** The span of the job `jobId` of `queue`, once it has ended. */
const jobSpan = (queue: string, jobId: string) =>
  waitFor(`the span of ${queue} job ${jobId}`, () =>
    spans().find(
      (s) =>
        s.name === `job ${queue}` &&
        s.attributes['messaging.destination.name'] === queue &&
        s.attributes['messaging.message.id'] === jobId,
    ),
  );

/** The ended span `span` descends from that is named `name`, if any. */
function ancestorNamed(span: ReadableSpan, name: string): ReadableSpan | undefined {
  let at: ReadableSpan | undefined = span;
  while (at && at.name !== name) {
    const parentId: string | undefined = at.parentSpanContext?.spanId;
    at = parentId ? spans().find((s) => idOf(s) === parentId) : undefined;
  }
  return at;
}

/** The ids of the events of this tenant of `type` whose data has `field` = `value`. */
const eventIds = (type: string, field: string, value: string) =>
  ctx.deps
    .knex('events')
    .where({ tenant_id: tenantId, type })
    .whereRaw('data->>? = ?', [field, value])
    .pluck('id') as Promise<string[]>;

/** A campaign's row, its recipients' states and its messages' statuses, and its events. */
async function campaignState(campaignId: string) {
  const { knex } = ctx.deps;
  return {
    campaign: await knex('campaigns')
      .where({ id: campaignId })
      .first('status', 'recipients', 'sent', 'failed', 'skipped', 'started_at', 'completed_at'),
    recipients: await knex('campaign_recipients')
      .where({ campaign_id: campaignId })
      .select('state')
      .count('* as n')
      .groupBy('state'),
    messages: await knex('sms_messages')
      .where({ campaign_id: campaignId })
      .select('id', 'status', 'created_at', 'updated_at'),
    events: await knex('events')
      .where({ tenant_id: tenantId })
      .whereRaw("data->>'campaign_id' = ?", [campaignId])
      .select('type', 'created_at'),
    joins: spans().filter((s) => s.name === 'campaign.join').length,
    at: new Date().toISOString(),
  };
}

/** The delivery attempt (to the subscription's receiver) of each event, once all ended. */
const attemptsOf = (ids: readonly string[]) =>
  waitFor(`the delivery attempts of ${ids.join(', ')}`, () => {
    const found = ids.map((id) =>
      spans().find(
        (s) => s.name === 'webhook.attempt' && s.attributes['switchboard.event_id'] === id,
      ),
    );
    return found.every((s) => s !== undefined) ? (found as ReadableSpan[]) : undefined;
  });

/**
 * Waits until `span`'s chain of parents reaches `root` through ended spans of its trace (a
 * parent may end after its children: a job after the events it emitted); fails when the
 * span is in another trace or its chain ends elsewhere.
 */
async function expectDescendant(span: ReadableSpan, root: ReadableSpan): Promise<void> {
  expect({ name: span.name, traceId: traceOf(span) }).toEqual({
    name: span.name,
    traceId: traceOf(root),
  });
  const top = await waitFor(`the chain from ${span.name} to the request`, () => {
    let at: ReadableSpan | undefined = span;
    while (at && idOf(at) !== idOf(root)) {
      const parentId: string | undefined = at.parentSpanContext?.spanId;
      if (!parentId) return at; // a root that is not the request's span: fails below
      at = spans().find((s) => traceOf(s) === traceOf(root) && idOf(s) === parentId);
    }
    return at; // undefined while a parent has not ended yet
  });
  expect({ from: span.name, top: top.name, id: idOf(top) }).toEqual({
    from: span.name,
    top: root.name,
    id: idOf(root),
  });
}

/** Every span of the flow is in the request's trace, under its span. */
async function expectOneTrace(root: ReadableSpan, flow: ReadableSpan[]): Promise<void> {
  expect(new Set(flow.map(traceOf))).toEqual(new Set([traceOf(root)]));
  for (const span of flow) await expectDescendant(span, root);
}

test('POST /calls/outbound: the dial job, call.started, call.completed and their deliveries are one trace', async () => {
  const res = await request(ctx.app)
    .post('/api/v1/calls/outbound')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to: '+14155550123' })
    .expect(202);
  const callId = res.body.id as string;
  const server = await requestSpan(res.headers['x-request-id'] as string);
  expect(server.name).toBe('POST /api/v1/calls/outbound');
  const job = await jobSpan('outbound-calls', callId);
  expect(job.parentSpanContext?.spanId).toBe(idOf(server));
  const events = await waitFor('call.started and call.completed', async () => {
    const ids = [
      ...(await eventIds('call.started', 'call_id', callId)),
      ...(await eventIds('call.completed', 'call_id', callId)),
    ];
    return ids.length === 2 ? ids : undefined;
  });
  const writes = events.map((id) =>
    spans().find((s) => s.name === 'outbox.write' && s.attributes['switchboard.event_id'] === id),
  );
  expect(writes.every((w) => w?.parentSpanContext?.spanId === idOf(job))).toBe(true);
  await expectOneTrace(server, [job, ...(writes as ReadableSpan[]), ...(await attemptsOf(events))]);
});

test('POST /sms/send: the send job, sms.sent and its delivery are one trace', async () => {
  const res = await request(ctx.app)
    .post('/api/v1/sms/send')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to: '+14155550124', message: 'Your table is ready' })
    .expect(202);
  const smsId = res.body.id as string;
  const server = await requestSpan(res.headers['x-request-id'] as string);
  const job = await jobSpan('sms', smsId);
  expect(job.parentSpanContext?.spanId).toBe(idOf(server));
  const events = await waitFor('sms.sent', async () => {
    const ids = await eventIds('sms.sent', 'sms_id', smsId);
    return ids.length === 1 ? ids : undefined;
  });
  await expectOneTrace(server, [job, ...(await attemptsOf(events))]);
});

test('POST /campaigns: the start job, every message, campaign.completed and their deliveries are one trace', async () => {
  const phones = ['+14155557001', '+14155557002', '+14155557003'];
  const res = await request(ctx.app)
    .post('/api/v1/campaigns')
    .set('Authorization', auth)
    .send({
      name: 'Traced',
      receptionist_id: rcp,
      message: 'Hi {{name}}, a spring check?',
      recipients: { phones },
      send_rate_per_minute: 600,
    })
    .expect(202);
  const campaignId = res.body.id as string;
  const server = await requestSpan(res.headers['x-request-id'] as string);
  const job = await jobSpan('campaigns', campaignId);
  expect(job.parentSpanContext?.spanId).toBe(idOf(server));
  const events = await waitFor('three sms.sent and campaign.completed', async () => {
    const sent = await eventIds('sms.sent', 'campaign_id', campaignId);
    const completed = await eventIds('campaign.completed', 'campaign_id', campaignId);
    return sent.length === 3 && completed.length === 1 ? [...sent, ...completed] : undefined;
  });
  await expectOneTrace(server, [job, ...(await attemptsOf(events))]);
});

test('POST /leads/import: the import job, every lead.created and their deliveries are one trace', async () => {
  const rows = [
    ['name', 'phone'],
    ['Ada Traced', '+14155558001'],
    ['Bo Traced', '+14155558002'],
  ];
  const res = await request(ctx.app)
    .post('/api/v1/leads/import')
    .set('Authorization', auth)
    .set('Content-Type', 'text/csv')
    .send(csv(rows))
    .expect(202);
  const importId = res.body.id as string;
  const server = await requestSpan(res.headers['x-request-id'] as string);
  const job = await jobSpan('lead-imports', importId);
  expect(job.parentSpanContext?.spanId).toBe(idOf(server));
  const events = await waitFor('two lead.created', async () => {
    const ids = [
      ...(await eventIds('lead.created', 'phone', '+14155558001')),
      ...(await eventIds('lead.created', 'phone', '+14155558002')),
    ];
    return ids.length === 2 ? ids : undefined;
  });
  await expectOneTrace(server, [job, ...(await attemptsOf(events))]);
});

test('a worker that joins a running campaign later sends it in the same trace', async () => {
  // One message a second: the worker that ran the start job sends the first one and stops;
  // a worker started then finds the campaign running and sends the rest.
  const phones = ['+14155557101', '+14155557102', '+14155557103', '+14155557104'];
  const res = await request(ctx.app)
    .post('/api/v1/campaigns')
    .set('Authorization', auth)
    .send({
      name: 'Traced across workers',
      receptionist_id: rcp,
      message: 'Hi {{name}}, still on for Friday?',
      recipients: { phones },
      send_rate_per_minute: 60,
    })
    .expect(202);
  const campaignId = res.body.id as string;
  const server = await requestSpan(res.headers['x-request-id'] as string);
  await jobSpan('campaigns', campaignId);
  await waitFor('the first sms.sent', async () =>
    (await eventIds('sms.sent', 'campaign_id', campaignId)).length > 0 ? true : undefined,
  );
  await worker?.close();
  worker = null;
  const pending = (await ctx.deps
    .knex('campaign_recipients')
    .where({ campaign_id: campaignId, state: 'pending' })
    .count('* as n')
    .first()) as { n: string };
  expect(Number(pending.n)).toBeGreaterThan(0);
  later = await startWorker();
  const events = await waitFor('four sms.sent and campaign.completed', async () => {
    const sent = await eventIds('sms.sent', 'campaign_id', campaignId);
    const completed = await eventIds('campaign.completed', 'campaign_id', campaignId);
    return sent.length === 4 && completed.length === 1 ? [...sent, ...completed] : undefined;
  }).catch(async (err: Error) => {
    // What a failure needs to be read: where each recipient and message stood.
    throw new Error(`${err.message}; then ${JSON.stringify(await campaignState(campaignId))}`);
  });
  const attempts = await attemptsOf(events);
  await expectOneTrace(server, attempts);
  // The later worker's sends are under its join of the campaign's trace.
  const joined = attempts.filter((a) => ancestorNamed(a, 'campaign.join'));
  expect(joined.length).toBeGreaterThan(0);
});
