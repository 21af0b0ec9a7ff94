import request from 'supertest';
import { validateEventData } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';
import { messages, uid } from '../support/fixtures';
import { ISO_MS } from '../support/webhooks';
import { addReceptionist } from '../support/receptionist';

// Usage metering through telephony ingestion (docs/API.md, Usage): minutes of completed calls
// counted once whatever the order or repetition of messages, in the month of ended_at;
// GET /usage and its period; usage.threshold at 80 and 100 % exactly once per period.
let ctx: TestContext;

const INGEST = 'Bearer test-ingest-token-0123456789';
const ingest = async (message: object) => {
  const res = await request(ctx.app)
    .post('/internal/v1/telephony/events')
    .set('Authorization', INGEST)
    .send(message);
  expect([200, 202]).toContain(res.status);
  return res;
};

interface Account {
  tenantId: string;
  auth: string;
  rcp: string;
}

async function account(
  planMinutes: number,
  names = ['Front Desk'],
): Promise<Account & { rcps: string[] }> {
  const t = await ctx.deps.stores.tenants.create({ name: `Usage ${uid()}`, planMinutes });
  const { auth } = await ctx.keyFor(t.id, ['read']);
  const rcps: string[] = [];
  for (const name of names) {
    rcps.push(await addReceptionist(ctx, t.id, { name, phoneNumber: '+14155550199' }));
  }
  return { tenantId: t.id, auth, rcp: rcps[0] as string, rcps };
}

/** One completed call (call.started then call.ended) of `seconds`, ending at `endedAt`. */
function call(rcp: string, seconds: number, endedAt = new Date(), endReason = 'caller_hangup') {
  const pcid = `pc_${uid()}`;
  const startedAt = new Date(endedAt.getTime() - seconds * 1000).toISOString();
  return {
    started: messages.started(rcp, pcid, startedAt),
    ended: {
      ...messages.ended(rcp, pcid, startedAt, endedAt.toISOString()),
      duration_seconds: seconds,
      end_reason: endReason,
    },
  };
}

const usage = async (a: Account, query = '') => {
  const res = await request(ctx.app).get(`/api/v1/usage${query}`).set('Authorization', a.auth);
  expect(res.status).toBe(200);
  return res.body;
};
const thresholds = async (a: Account) =>
  (await ctx.deps.stores.events.listForTenant(a.tenantId, 'usage.threshold')).map((e) => ({
    receptionistId: e.receptionistId,
    ...(e.data as { threshold: number; minutes_used: number; billing_period_end: string }),
  }));

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe('GET /usage', () => {
  it('an account without calls: zeros for the current month', async () => {
    const a = await account(1000);
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    expect(await usage(a)).toEqual({
      billing_period_start: start.toISOString(),
      billing_period_end: end.toISOString(),
      minutes_used: 0,
      minutes_included: 1000,
      percent_used: 0,
      calls_completed: 0,
      sms_sent: 0,
      sms_received: 0,
      by_receptionist: [],
    });
  });

  it('counts ceil(duration / 60) minutes per completed call, per receptionist', async () => {
    const a = await account(1000, ['Front Desk', 'After Hours', 'Idle']);
    const [front, after] = a.rcps as [string, string];
    for (const [rcp, seconds] of [
      [front, 60],
      [front, 61],
      [after, 1],
      [after, 0],
    ] as const) {
      const c = call(rcp, seconds);
      await ingest(c.started);
      await ingest(c.ended);
    }
    const u = await usage(a);
    expect(u).toMatchObject({ minutes_used: 4, calls_completed: 4, percent_used: 0.4 });
    expect(u.by_receptionist).toEqual([
      { receptionist_id: front, name: 'Front Desk', minutes_used: 3, calls_completed: 2 },
      { receptionist_id: after, name: 'After Hours', minutes_used: 1, calls_completed: 2 },
    ]);
  });

  it('replayed, repeated and out-of-order messages count a call once', async () => {
    const a = await account(1000);
    const c = call(a.rcp, 95);
    await ingest(c.ended); // before its call.started
    await ingest(c.ended); // the same message again: a duplicate
    await ingest({ ...c.ended, id: `msg_${uid()}` }); // another report of the same end
    await ingest(c.started); // late
    expect(await usage(a)).toMatchObject({ minutes_used: 2, calls_completed: 1 });
    const counted = await ctx.deps.knex('calls').where({ tenant_id: a.tenantId });
    expect(counted.map((r: { counted_minutes: number }) => r.counted_minutes)).toEqual([2]);
  });

  it('calls that do not end completed add nothing', async () => {
    const a = await account(1000);
    for (const reason of ['busy', 'no_answer', 'voicemail', 'error']) {
      const c = call(a.rcp, 120, new Date(), reason);
      await ingest(c.started);
      await ingest(c.ended);
    }
    const pcid = `pc_${uid()}`;
    const at = new Date().toISOString();
    await ingest(messages.missed(a.rcp, pcid, at, at));
    expect(await usage(a)).toMatchObject({ minutes_used: 0, calls_completed: 0 });
  });

  it('a call counts in the month of ended_at; ?period reads any month', async () => {
    const a = await account(1000);
    const c = call(a.rcp, 180, new Date('2026-02-01T00:01:00.000Z')); // started in January
    await ingest(c.started);
    await ingest(c.ended);
    expect(await usage(a, '?period=2026-01')).toMatchObject({
      billing_period_start: '2026-01-01T00:00:00.000Z',
      billing_period_end: '2026-02-01T00:00:00.000Z',
      minutes_used: 0,
      calls_completed: 0,
      by_receptionist: [],
    });
    expect(await usage(a, '?period=2026-02')).toMatchObject({
      billing_period_start: '2026-02-01T00:00:00.000Z',
      billing_period_end: '2026-03-01T00:00:00.000Z',
      minutes_used: 3,
      calls_completed: 1,
    });
    expect(await usage(a, '?period=2025-12')).toMatchObject({
      billing_period_start: '2025-12-01T00:00:00.000Z',
      billing_period_end: '2026-01-01T00:00:00.000Z',
    });
  });

  it('percent_used is rounded half up to one decimal', async () => {
    const a = await account(16);
    const c = call(a.rcp, 60);
    await ingest(c.started);
    await ingest(c.ended);
    expect((await usage(a)).percent_used).toBe(6.3); // 6.25 %
    await ctx.deps.knex('tenants').where({ id: a.tenantId }).update({ plan_minutes: 3 });
    expect((await usage(a)).percent_used).toBe(33.3);
    await ctx.deps.knex('tenants').where({ id: a.tenantId }).update({ plan_minutes: 0 });
    expect(await usage(a)).toMatchObject({ percent_used: 0, minutes_included: 0 });
  });

  it.each(['2026-13', '2026-00', '2026-1', '26-01', '2026-01-01', 'now', ''])(
    'period=%j is a 400 on period',
    async (period) => {
      const a = await account(1);
      const res = await request(ctx.app)
        .get(`/api/v1/usage?period=${period}`)
        .set('Authorization', a.auth);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'period' });
    },
  );

  it('counts SMS through UsageStore.countSms (the SMS code path calls it)', async () => {
    const a = await account(1000);
    const at = new Date();
    const sms = (direction: 'outbound' | 'inbound') =>
      ctx.deps.knex.transaction((trx) =>
        ctx.deps.stores.usage.countSms(trx, {
          tenantId: a.tenantId,
          receptionistId: a.rcp,
          at,
          direction,
        }),
      );
    await sms('outbound');
    await sms('outbound');
    await sms('inbound');
    expect(await usage(a)).toMatchObject({
      sms_sent: 2,
      sms_received: 1,
      calls_completed: 0,
      by_receptionist: [],
    });
  });

  it("one tenant's calls are not in another's usage", async () => {
    const a = await account(1000);
    const b = await account(1000);
    const c = call(a.rcp, 30);
    await ingest(c.started);
    await ingest(c.ended);
    expect(await usage(b)).toMatchObject({ minutes_used: 0, by_receptionist: [] });
  });
});

describe('usage.threshold', () => {
  const endOfThisPeriod = () => {
    const now = new Date();
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
  };

  it('fires once at 80 % and once at 100 %, account-level, with the spec data', async () => {
    const a = await account(10);
    for (let i = 0; i < 7; i++) {
      const c = call(a.rcp, 95); // 2 minutes each: 8 after four calls, 10 after five
      await ingest(c.started);
      await ingest(c.ended);
    }
    const fired = await thresholds(a);
    expect(fired).toEqual([
      {
        receptionistId: null,
        threshold: 80,
        minutes_used: 8,
        minutes_included: 10,
        billing_period_end: endOfThisPeriod(),
      },
      {
        receptionistId: null,
        threshold: 100,
        minutes_used: 10,
        minutes_included: 10,
        billing_period_end: endOfThisPeriod(),
      },
    ]);
    for (const e of fired) {
      const { receptionistId: _, ...data } = e;
      expect(validateEventData('usage.threshold', data)).toBeNull();
    }
    expect((await usage(a)).percent_used).toBe(140);
  });

  it('a call that crosses both fires both', async () => {
    const a = await account(2);
    const c = call(a.rcp, 150);
    await ingest(c.started);
    await ingest(c.ended);
    const fired = await thresholds(a);
    expect(fired.map((e) => Number(e.threshold)).sort((x, y) => x - y)).toEqual([80, 100]);
    expect(fired.every((e) => e.minutes_used === 3)).toBe(true);
  });

  it('fires again in the next period, and never with minutes_included 0', async () => {
    const a = await account(1);
    const jan = call(a.rcp, 60, new Date('2026-01-15T10:00:00.000Z'));
    const feb = call(a.rcp, 60, new Date('2026-02-15T10:00:00.000Z'));
    for (const c of [jan, feb]) {
      await ingest(c.started);
      await ingest(c.ended);
    }
    const ends = (await thresholds(a)).map((e) => `${e.threshold}@${e.billing_period_end}`);
    expect(ends.sort()).toEqual([
      '100@2026-02-01T00:00:00.000Z',
      '100@2026-03-01T00:00:00.000Z',
      '80@2026-02-01T00:00:00.000Z',
      '80@2026-03-01T00:00:00.000Z',
    ]);
    expect(ends.every((e) => ISO_MS.test(e.split('@')[1] as string))).toBe(true);

    const none = await account(0);
    for (let i = 0; i < 3; i++) {
      const c = call(none.rcp, 600);
      await ingest(c.started);
      await ingest(c.ended);
    }
    expect(await thresholds(none)).toEqual([]);
    expect(await usage(none)).toMatchObject({ minutes_used: 30, percent_used: 0 });
  });

  it('works with the largest plans (no integer overflow in the threshold check)', async () => {
    const a = await account(2_000_000_000);
    const c = call(a.rcp, 60);
    await ingest(c.started);
    expect((await ingest(c.ended)).status).toBe(202);
    expect(await usage(a)).toMatchObject({ minutes_used: 1, percent_used: 0 });
    expect(await thresholds(a)).toEqual([]);
  });
});
