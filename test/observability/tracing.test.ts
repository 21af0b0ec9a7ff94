import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { closedPort, type TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import type { TestContext } from '../support/context';
import { messages, uid } from '../support/fixtures';
import {
  startOtlpCollector,
  startStuckCollector,
  type OtlpCollector,
} from '../support/otlp-collector';
import { subscribedTenant } from '../support/subscribed-tenant';
import { waitFor } from '../support/wait';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

// One trace across both processes, exported over OTLP/HTTP to a collector on 127.0.0.1:
// the ingestion request (API) → outbox write (API) → relay → fan-out → attempt (worker).
let ctx: TestContext;
let receiver: TestReceiver;
let rcp: string;
let auth: string;
let collector: OtlpCollector;
let api: ApiProcess;
let worker: WorkerProcess;

/** Spans are exported within 100 ms of ending (the batch processor's delay). */
const OTEL = { OTEL_BSP_SCHEDULE_DELAY: '100' };

beforeAll(async () => {
  let cert;
  ({ ctx, receiver, cert, rcp, auth } = await subscribedTenant({ phoneNumber: '+14155550177' }));
  const certDir = mkdtempSync(path.join(tmpdir(), 'sb-tracing-'));
  writeFileSync(path.join(certDir, 'ca.pem'), cert.cert);
  collector = await startOtlpCollector();
  const endpoint = { ...OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint };
  // One after the other: on a busy machine two starting at once can miss the start deadline.
  api = await startApiProcess(ctx.config, { env: endpoint });
  worker = await startWorkerProcess(ctx.config, {
    ...endpoint,
    NODE_EXTRA_CA_CERTS: path.join(certDir, 'ca.pem'),
  });
}, 150_000);
afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await collector?.close();
  await receiver?.close();
  await ctx?.close();
});

/**
 * The spans of a trace once every named one has arrived. A span is exported when it ends, in
 * batches, and a parent ends after its children (a fan-out after the attempts it ran
 * inline), so a child can arrive a batch before its parent.
 */
const traceWith = (traceId: string, names: string[]) =>
  waitFor(`the spans ${names.join(', ')}`, () => {
    const spans = collector.spans.filter((s) => s.traceId === traceId);
    return names.every((n) => spans.some((s) => s.name === n)) ? spans : undefined;
  });

const ingest = (base: string, body: object, headers: Record<string, string> = {}) =>
  fetch(`${base}/internal/v1/telephony/events`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${ctx.config.ingestToken}`,
      'Content-Type': 'application/json',
      ...headers,
    },
    body: JSON.stringify(body),
  });

test('one ingested call is one trace from the API request to the attempt with the status code', async () => {
  const res = await ingest(api.baseUrl, messages.started(rcp, uid(), '2026-11-21T10:00:00.000Z'));
  expect(res.status).toBe(202);
  const requestId = res.headers.get('x-request-id');
  const server = await waitFor('the request span', () =>
    collector.spans.find((s) => s.attributes['switchboard.request_id'] === requestId),
  );
  expect(server).toMatchObject({
    service: 'switchboard-api',
    name: 'POST /internal/v1/telephony/events',
    attributes: { 'http.route': '/internal/v1/telephony/events', 'http.response.status_code': 202 },
  });
  const spans = await traceWith(server.traceId, ['outbox.write', 'webhook.attempt']);
  const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
  const attempt = byName['webhook.attempt'] as (typeof spans)[number];
  expect(byName['outbox.write']).toMatchObject({
    service: 'switchboard-api',
    parentSpanId: server.spanId,
    attributes: { 'switchboard.event_type': 'call.started' },
  });
  // The receiver answers 204; the delivery carried the attempt span's traceparent.
  expect(attempt).toMatchObject({
    service: 'switchboard-worker',
    attributes: { 'http.response.status_code': 204 },
  });
  // Made by the relay or by a delivery job, the attempt is a child of the outbox write.
  expect(attempt.parentSpanId).toBe(byName['outbox.write']?.spanId);
  const delivered = receiver.requests.find(
    (r) => r.headers['x-service-event-id'] === attempt.attributes['switchboard.event_id'],
  );
  expect(delivered?.headers.traceparent).toBe(`00-${server.traceId}-${attempt.spanId}-01`);
}, 90_000);

test('POST /sms/send and its sms.sent delivery are one trace', async () => {
  const res = await fetch(`${api.baseUrl}/api/v1/sms/send`, {
    method: 'POST',
    headers: { Authorization: auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ receptionist_id: rcp, to: '+14155550123', message: 'Hi' }),
  });
  expect(res.status).toBe(202);
  const requestId = res.headers.get('x-request-id');
  const server = await waitFor('the request span', () =>
    collector.spans.find((s) => s.attributes['switchboard.request_id'] === requestId),
  );
  const trace = await traceWith(server.traceId, ['webhook.attempt', 'job sms', 'outbox.write']);
  const attempt = trace.find((s) => s.name === 'webhook.attempt');
  expect(attempt?.attributes['http.response.status_code']).toBe(204);
  const job = trace.find((s) => s.name === 'job sms');
  expect(job).toMatchObject({ service: 'switchboard-worker', parentSpanId: server.spanId });
  expect(trace.find((s) => s.name === 'outbox.write')).toMatchObject({
    service: 'switchboard-worker',
    parentSpanId: job?.spanId,
    attributes: { 'switchboard.event_type': 'sms.sent' },
  });
});

test("a caller's traceparent is continued; a malformed one is ignored, never an error", async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const valid = await ingest(
    api.baseUrl,
    messages.started(rcp, uid(), '2026-11-21T10:00:00.000Z'),
    { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
  );
  expect(valid.status).toBe(202);
  await waitFor('the continued trace', () =>
    collector.spans.find(
      (s) =>
        s.traceId === traceId &&
        s.attributes['switchboard.request_id'] === valid.headers.get('x-request-id'),
    ),
  );
  for (const bad of ['garbage', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, '00-xyz-abc-01']) {
    const res = await ingest(
      api.baseUrl,
      messages.started(rcp, uid(), '2026-11-21T10:00:00.000Z'),
      {
        traceparent: bad,
      },
    );
    expect(res.status).toBe(202);
    const span = await waitFor('the span of the request', () =>
      collector.spans.find(
        (s) => s.attributes['switchboard.request_id'] === res.headers.get('x-request-id'),
      ),
    );
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.parentSpanId).toBe('');
  }
}, 90_000);

test('an exporter whose collector hangs or is gone never breaks or slows requests', async () => {
  // One collector holds every export it is sent and never answers, with the exporter's
  // timeouts longer than the test; the other endpoint is a closed port.
  const stuck = await startStuckCollector();
  const port = await closedPort();
  const processes: ApiProcess[] = [];
  try {
    // One after the other: on a busy machine two starting at once can miss the start deadline.
    const hung = await startApiProcess(ctx.config, {
      env: {
        ...OTEL,
        OTEL_EXPORTER_OTLP_ENDPOINT: stuck.endpoint,
        OTEL_EXPORTER_OTLP_TIMEOUT: '120000',
        OTEL_BSP_EXPORT_TIMEOUT: '120000',
      },
    });
    processes.push(hung);
    const lost = await startApiProcess(ctx.config, {
      env: { ...OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
    });
    processes.push(lost);
    // A request that fails names the process it went to, with its pid and stderr.
    const accepted = async (name: string, api: ApiProcess) => {
      const body = messages.started(rcp, uid(), '2026-11-21T10:00:00.000Z');
      const res = await ingest(api.baseUrl, body).catch((err: unknown) => {
        const code = (err as { cause?: { code?: string } }).cause?.code ?? String(err);
        throw new Error(`${name} (${api.baseUrl}, pid ${api.pid}): ${code}\n${api.stderr()}`);
      });
      expect(res.status).toBe(202);
    };
    await accepted('hung', hung);
    await waitFor('an export held by the collector', () => stuck.held > 0);
    for (let i = 0; i < 20; i++) {
      await accepted('hung', hung);
      await accepted('lost', lost);
    }
    // Every request was answered while the collector still held every export it had been
    // sent: none waited for an export (a blocking one would hold the first request for the
    // exporter's timeout, 120 s), on a machine of any speed. Dropped spans cost nothing.
    expect(stuck.ended).toBe(0);
    expect(hung.stderr()).not.toMatch(/Error/);
    expect(lost.stderr()).not.toMatch(/Error|ECONNREFUSED/);
  } finally {
    await Promise.all([...processes.map((p) => p.stop()), stuck.close()]);
  }
}, 150_000);
