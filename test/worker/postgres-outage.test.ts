import request from 'supertest';
import { SimulatorProvider, type TelephonyProvider } from '../../apps/worker/src/dialler';
import { createTestContext, type TestContext } from '../support/context';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';

// Postgres goes away while outbound calls are on the phone. Every report the dialler makes
// in the meantime (answered, ended, busy, no answer) must be retried until it commits, so
// that after the outage every call ends with what really happened on the phone: no call
// stranded in progress, no answered call marked failed, no event twice.
const FINAL = ['completed', 'busy', 'no_answer', 'failed'];
/** The simulator's magic numbers and what they must end as. */
const EXPECTED: Record<string, { status: string; outcome: string; events: string[] }> = {
  '0001': { status: 'busy', outcome: 'no_outcome', events: ['call.completed'] },
  '0002': { status: 'no_answer', outcome: 'no_outcome', events: ['call.completed'] },
  '0003': { status: 'failed', outcome: 'no_outcome', events: ['call.completed'] },
};
const ANSWERED = {
  status: 'completed',
  outcome: 'booked',
  events: ['call.started', 'call.completed'],
};

let pg: PrivatePostgres;
let ctx: TestContext;
let worker: TestWorker;
/**
 * What the phone side did (the simulator, observed): the calls it dialled, those whose end it
 * reported (committed or not) or whose dial is over, and those with a report still waiting to
 * commit.
 */
const dialled = new Set<string>();
const endReported = new Set<string>();
const reporting = new Set<string>();

beforeAll(async () => {
  pg = await startPrivatePostgres();
  const url = await pg.createMigratedDatabase('switchboard');
  ctx = await createTestContext({ DATABASE_URL: url, WORKER_CONCURRENCY: '24' });
  const simulator = new SimulatorProvider(ctx.config.simulatorSpeed);
  const observed: TelephonyProvider = {
    name: simulator.name,
    providerCallId: (callId) => simulator.providerCallId(callId),
    dial: (req, report) => {
      dialled.add(req.callId);
      const dial = simulator.dial(req, async (message) => {
        if (message.type === 'call.ended') endReported.add(req.callId);
        reporting.add(req.callId);
        try {
          await report(message);
        } finally {
          reporting.delete(req.callId);
        }
      });
      // A dial that failed is over too (the dialler then reports the call failed itself).
      return dial.finally(() => endReported.add(req.callId));
    },
    close: () => simulator.close(),
  };
  worker = await startTestWorker(ctx, { runner: { telephonyProvider: observed } });
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await ctx?.close();
  await pg?.destroy();
});

it('every call ends with its true outcome after Postgres was away mid-call', async () => {
  const { auth, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: '+14155550100',
  });
  const numbers = [
    ...Array.from({ length: 18 }, (_, i) => `+1415555${String(2000 + i)}`),
    '+14155550001',
    '+14155550002',
    '+14155550003',
  ];
  const calls = await Promise.all(
    numbers.map(async (to) => {
      const res = await request(ctx.app)
        .post('/api/v1/calls/outbound')
        .set('Authorization', auth)
        .send({ receptionist_id: rcp, to });
      expect(res.status).toBe(202);
      return { id: res.body.id as string, to };
    }),
  );
  const statuses = async () =>
    (await ctx.deps.knex('calls').select('id', 'status')) as Array<{ id: string; status: string }>;
  // The outage starts while calls are answered and talking, before any has ended.
  await waitFor(
    'most calls to be in progress',
    async () => (await statuses()).filter((c) => c.status === 'in_progress').length >= 12,
  );
  await pg.stop('fast');
  // Postgres stays away until every call dialled has ended on the phone or waits on a report
  // (a call answered meanwhile waits on its call.started): each report made in the outage (the
  // ends of the calls in progress at the stop, at least) must be retried until it commits.
  await waitFor('every call dialled to end on the phone or wait on a report', () =>
    [...dialled].every((id) => endReported.has(id) || reporting.has(id)),
  );
  await pg.start();

  const ended = await waitFor(
    'every call to end',
    async () => {
      const rows = await statuses().catch(() => []);
      return rows.length === calls.length && rows.every((c) => FINAL.includes(c.status))
        ? rows
        : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  const events = (await ctx.deps.knex('events').select('type', 'data')) as Array<{
    type: string;
    data: { call_id: string };
  }>;
  for (const call of calls) {
    const want = EXPECTED[call.to.slice(-4)] ?? ANSWERED;
    const row = await ctx.deps.knex('calls').where({ id: call.id }).first();
    expect({ to: call.to, status: row.status, outcome: row.outcome }).toEqual({
      to: call.to,
      status: want.status,
      outcome: want.outcome,
    });
    const types = events.filter((e) => e.data.call_id === call.id).map((e) => e.type);
    expect({ to: call.to, events: types.sort() }).toEqual({
      to: call.to,
      events: [...want.events].sort(),
    });
  }
  expect(ended).toHaveLength(calls.length);
}, 120_000);
