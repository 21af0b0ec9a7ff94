import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { messages, uid } from '../support/fixtures';
import { receptionistTenant } from '../support/receptionist';

let ctx: TestContext;
let auth: string;
let rcp: string;
beforeAll(async () => {
  // No 429s: this file counts series, not refusals.
  ctx = await createTestContext({ RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' });
  ({ auth, rcp } = await receptionistTenant(ctx));
});
afterAll(() => ctx.close());

const scrape = () => ctx.deps.metrics.registry.metrics();

/** The value of one series of the scrape, 0 when absent. */
async function value(series: string): Promise<number> {
  const line = (await scrape()).split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Request series (count, duration buckets...) in the scrape. */
const httpSeries = async () =>
  (await scrape()).split('\n').filter((l) => l.startsWith('switchboard_http_')).length;

const hex = () => randomBytes(8).toString('hex');
/** Requests to random ids and random paths, each kind of route several times. */
const randomRequests = (n: number) =>
  Array.from({ length: n }, (_, i) => {
    const r = request(ctx.app);
    switch (i % 5) {
      case 0:
        return r.get(`/v1/calls/call_${hex()}`).set('Authorization', auth);
      case 1:
        return r.get(`/api/v1/leads/lead_${hex()}`).set('Authorization', auth);
      case 2:
        return r.get(`/api/v1/no-such-thing/${hex()}?x=${hex()}`).set('Authorization', auth);
      case 3:
        return r.get(`/v1/webhooks/wh_${hex()}/deliveries`).set('Authorization', auth);
      default:
        return r.delete(`/v1/calls/call_${hex()}`).set('Authorization', `Bearer ${hex()}`);
    }
  });

test('requests are counted by method, route template, status class and status', async () => {
  await request(ctx.app).get(`/v1/calls/call_${hex()}`).set('Authorization', auth).expect(404);
  const text = await scrape();
  expect(text).toContain(
    'switchboard_http_requests_total{method="GET",route="/api/v1/calls/:id",status_class="4xx",status="404"}',
  );
  expect(text).toMatch(
    /switchboard_http_request_duration_seconds_bucket\{le="[^"]+",method="GET",route="\/api\/v1\/calls\/:id",status_class="4xx"\}/,
  );
  expect(text).toContain('switchboard_http_requests_in_flight 0');
  expect(text).toContain('switchboard_api_process_cpu_seconds_total');
});

test('1,000 requests to random ids and paths add no series beyond a fixed bound', async () => {
  for (let i = 0; i < 2; i++) await Promise.all(randomRequests(25));
  const before = await httpSeries();
  for (let i = 0; i < 20; i++) await Promise.all(randomRequests(50));
  const after = await httpSeries();
  expect(after).toBe(before);
  // 5 request kinds × (count + 14 histogram lines) and the in-flight gauge, with room.
  expect(after).toBeLessThan(200);
  expect(await scrape()).not.toMatch(/call_[0-9a-f]{16}|no-such-thing|ten_|key_/);
}, 180_000);

test('business counters count what was created, and replays separately', async () => {
  const created = await value('switchboard_leads_created_total');
  const replays = await value('switchboard_idempotent_replays_total{route="/api/v1/leads"}');
  const key = uid();
  for (let i = 0; i < 2; i++) {
    await request(ctx.app)
      .post('/api/v1/leads')
      .set('Authorization', auth)
      .set('Idempotency-Key', key)
      .send({ phone: '+14155550151', notes: 'metrics' })
      .expect(201);
  }
  expect(await value('switchboard_leads_created_total')).toBe(created + 1);
  expect(await value('switchboard_idempotent_replays_total{route="/api/v1/leads"}')).toBe(
    replays + 1,
  );

  const ingested = 'switchboard_calls_ingested_total{type="call.started"}';
  const calls = await value(ingested);
  await request(ctx.app)
    .post('/internal/v1/telephony/events')
    .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
    .send(messages.started(rcp, uid(), '2026-11-21T10:00:00.000Z'))
    .expect(202);
  expect(await value(ingested)).toBe(calls + 1);
});
