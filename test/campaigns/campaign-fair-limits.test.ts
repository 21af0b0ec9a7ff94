import request from 'supertest';
import { campaignMessages, recipientStates } from '../support/campaigns';
import type { TestContext } from '../support/context';
import { subscribedTenant, type SubscribedTenant } from '../support/subscribed-tenant';
import { waitFor } from '../support/worker';

// Limits of a tenant's campaigns together (docs/API.md, Campaigns): one number is texted at
// most once per repeat window by all of them (allow_repeat excepted), and they share one
// sending rate (CAMPAIGN_TENANT_RATE_PER_MINUTE, 120 here: 2 a second).
const RCP_PHONE = '+14155550100';
const SHARED = '+14155557777';

let ctx: TestContext;
let auth: string;
let rcp: string;

let world: SubscribedTenant;
beforeAll(async () => {
  world = await subscribedTenant({
    env: { SIMULATOR_SPEED: '20', CAMPAIGN_TENANT_RATE_PER_MINUTE: '120' },
    phoneNumber: RCP_PHONE,
  });
  ({ ctx, auth, rcp } = world);
  await world.startWorker({ campaignPollMs: 200 });
});
afterAll(() => world?.close());

const create = async (b: object) => {
  const res = await request(ctx.app)
    .post('/api/v1/campaigns')
    .set('Authorization', auth)
    .send({ name: 'Offer', receptionist_id: rcp, message: 'Hi! Reply STOP to opt out.', ...b });
  expect(res.status).toBe(202);
  return res.body as { id: string; allow_repeat: boolean; skipped: number };
};
const completed = (id: string) =>
  waitFor(
    `campaign ${id} completed`,
    async () => {
      const res = await request(ctx.app).get(`/api/v1/campaigns/${id}`).set('Authorization', auth);
      return res.body.status === 'completed' ? res.body : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
const own = (i: number, k: number) => `+1415620${i}${String(100 + k).padStart(3, '0')}`;

it('five campaigns at once text a shared number once; their rate is the tenant’s', async () => {
  const created = [];
  for (let i = 0; i < 5; i++) {
    created.push(
      await create({
        recipients: { phones: [SHARED, own(i, 1), own(i, 2)] },
        send_rate_per_minute: 600,
      }),
    );
  }
  expect(created[0]).toMatchObject({ allow_repeat: false, skipped: 0 });
  const done = await Promise.all(created.map((c) => completed(c.id)));
  const messages = (await Promise.all(created.map((c) => campaignMessages(ctx, c.id)))).flat();
  // The shared number: one message among all five; the others count it as skipped.
  expect(messages.filter((m) => m.to_number === SHARED)).toHaveLength(1);
  expect(done.reduce((n, c) => n + c.skipped, 0)).toBe(4);
  expect(done.reduce((n, c) => n + c.sent, 0)).toBe(11);
  const states = await Promise.all(created.map((c) => recipientStates(ctx, c.id)));
  expect(states.reduce((n, s) => n + (s.skipped ?? 0), 0)).toBe(4);

  // One rate for the tenant: 11 messages at 2 a second (a burst of 2), not 10 a second
  // each. Judged by their own timestamps: never more than the allowance of their span.
  const times = messages.map((m) => m.created_at.getTime()).sort((a, b) => a - b);
  const spanSec = ((times.at(-1) as number) - (times[0] as number)) / 1000;
  expect(times.length).toBeLessThanOrEqual(2 * Math.ceil(spanSec) + 2);
});

it('allow_repeat texts a number again within the window', async () => {
  const first = await create({ recipients: { phones: [own(8, 1)] } });
  await completed(first.id);
  const again = await create({ recipients: { phones: [own(8, 1)] }, allow_repeat: true });
  expect(again.allow_repeat).toBe(true);
  expect(await completed(again.id)).toMatchObject({ sent: 1, skipped: 0 });
  const third = await create({ recipients: { phones: [own(8, 1)] } });
  expect(await completed(third.id)).toMatchObject({ sent: 0, skipped: 1 });
});
