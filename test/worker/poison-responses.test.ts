import type { ServerResponse } from 'node:http';
import request from 'supertest';
import type { TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, waitFor } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';

// Receivers answer with bytes Postgres cannot store as text (NUL, invalid UTF-8), and the
// attempt log refuses rows outright: every such delivery still ends, with its attempts
// counted (at most 3), logged where possible, and counted toward auto-disable. Before, a
// delivery whose attempt could not be recorded was sent again and again for ever.
const NUL = Buffer.from('ok\u0000done', 'utf8');
const BAD_UTF8 = Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0x41, 0xc3]);
let receiver: TestReceiver;
let base: string;
let ctx: TestContext;
let world: WebhookWorld;

const answer = (status: number, body: Buffer) => (_req: unknown, res: ServerResponse) =>
  res.writeHead(status, { 'content-type': 'text/plain' }).end(body);

beforeAll(async () => {
  world = await startWebhookWorld(
    {
      '/nul-200': answer(200, NUL),
      '/nul-500': answer(500, NUL),
      '/utf8-200': answer(200, BAD_UTF8),
      '/utf8-500': answer(500, BAD_UTF8),
      '/refused-500': answer(500, Buffer.from('plain')),
      '/ok': answer(200, Buffer.from('fine')),
    },
    {
      env: {
        WEBHOOK_RETRY_BACKOFF_MS: '50,100,200',
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_DISABLE_AFTER_FAILURES: '2',
      },
    },
  );
  ({ receiver, base, ctx } = world);
});
afterAll(() => world?.close());

async function tenant() {
  const { rcp, ...t } = await receptionistTenant(ctx);
  return { t, emit: () => emitCallStarted(ctx, t.tenantId, rcp) };
}
async function subscriber(path: string, owner?: Awaited<ReturnType<typeof tenant>>) {
  const { t, emit } = owner ?? (await tenant());
  const res = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', t.auth)
    .send({ url: `${base}${path}` });
  expect(res.status).toBe(201);
  return { t, emit, id: res.body.id as string };
}

interface LoggedDelivery {
  status: string;
  attempts: Array<{ attempt: number; status_code: number | null; response_excerpt: string | null }>;
}
/** The subscription's delivery log through the API, once every delivery in it is final. */
async function finalLog(s: Awaited<ReturnType<typeof subscriber>>, count: number) {
  return waitFor(`${count} final deliveries`, async () => {
    const res = await request(ctx.app)
      .get(`/api/v1/webhooks/${s.id}/deliveries`)
      .set('Authorization', s.t.auth);
    const data = res.body.data as LoggedDelivery[];
    return data.length === count &&
      data.every((d) => d.status !== 'pending' && d.status !== 'delivering')
      ? data
      : undefined;
  });
}
const hits = (path: string) => receiver.requests.filter((r) => r.path === path).length;

it.each([
  ['/nul-200', 'ok\uFFFDdone'],
  ['/utf8-200', 'ok\uFFFD\uFFFDA\uFFFD'],
])(
  'a 2xx answer with unstorable bytes (%s) succeeds once, its excerpt stored safely',
  async (path, excerpt) => {
    const s = await subscriber(path);
    await s.emit();
    const [d] = await finalLog(s, 1);
    expect(d?.status).toBe('succeeded');
    expect(d?.attempts).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 200, response_excerpt: excerpt }),
    ]);
    expect(hits(path)).toBe(1);
  },
);

it.each(['/nul-500', '/utf8-500'])(
  'a 5xx answer with unstorable bytes (%s) fails after 3 logged attempts and counts toward auto-disable',
  async (path) => {
    const s = await subscriber(path);
    await s.emit();
    await s.emit();
    const log = await finalLog(s, 2);
    for (const d of log) {
      expect(d.status).toBe('failed');
      expect(d.attempts.map((a) => a.status_code)).toEqual([500, 500, 500]);
      for (const a of d.attempts) expect(a.response_excerpt).not.toContain('\u0000');
    }
    expect(hits(path)).toBe(6);
    const sub = await ctx.deps.knex('webhook_subscriptions').where({ id: s.id }).first();
    expect(sub).toMatchObject({ consecutive_failures: 2, is_active: false });
  },
);

it('a delivery whose attempts cannot be logged at all still ends, counted', async () => {
  const s = await subscriber('/refused-500');
  // Postgres itself refuses every attempt row of this subscription's deliveries.
  await ctx.deps.knex.raw(`
    CREATE FUNCTION refuse_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM webhook_deliveries d
                  WHERE d.id = NEW.delivery_id AND d.subscription_id = '${s.id}') THEN
        RAISE EXCEPTION 'attempt rows refused by this test';
      END IF;
      RETURN NEW;
    END $$`);
  await ctx.deps.knex.raw(
    'CREATE TRIGGER refuse_attempts BEFORE INSERT ON webhook_delivery_attempts FOR EACH ROW EXECUTE FUNCTION refuse_attempts()',
  );
  // And every latest attempt kept on their delivery rows (the attempt not yet superseded).
  await ctx.deps.knex.raw(`
    CREATE FUNCTION refuse_latest_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.subscription_id = '${s.id}'
         AND (NEW.latest_round, NEW.latest_attempt)
             IS DISTINCT FROM (OLD.latest_round, OLD.latest_attempt) THEN
        RAISE EXCEPTION 'latest attempts refused by this test';
      END IF;
      RETURN NEW;
    END $$`);
  await ctx.deps.knex.raw(
    'CREATE TRIGGER refuse_latest_attempts BEFORE UPDATE ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_latest_attempts()',
  );
  await s.emit();
  const [d] = await finalLog(s, 1);
  expect(d?.status).toBe('failed');
  expect(d?.attempts).toEqual([]);
  const row = await ctx.deps.knex('webhook_deliveries').where({ subscription_id: s.id }).first();
  expect(row).toMatchObject({ attempts: 3, last_status_code: 500 });
  expect(hits('/refused-500')).toBe(3);
  const sub = await ctx.deps.knex('webhook_subscriptions').where({ id: s.id }).first();
  expect(sub.consecutive_failures).toBe(1);
});

it('an attempt claimed three times without an outcome is not sent a fourth time', async () => {
  // An event fanned out before the subscription existed, then a delivery to it as three
  // workers left it that died between sending and recording (their claims have lapsed).
  const owner = await tenant();
  const eventId = await owner.emit();
  await waitFor('fan-out of the event', () => ctx.deps.stores.events.isFannedOut(eventId));
  const s = await subscriber('/ok', owner);
  await ctx.deps.knex('webhook_deliveries').insert({
    id: `dlv_${eventId.slice(4)}`,
    tenant_id: s.t.tenantId,
    event_id: eventId,
    subscription_id: s.id,
    status: 'delivering',
    attempts: 0,
    claims: 3,
    next_attempt_at: new Date(Date.now() - 60_000),
    locked_until: new Date(Date.now() - 1_000),
  });
  const [d] = await finalLog(s, 1);
  expect(d?.status).toBe('succeeded');
  expect(d?.attempts).toEqual([
    expect.objectContaining({ attempt: 1, status_code: null, error: 'outcome_unknown' }),
    expect.objectContaining({ attempt: 2, status_code: 200 }),
  ]);
  expect(hits('/ok')).toBe(1);
});
