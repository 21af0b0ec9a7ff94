import request from 'supertest';
import { validateEventData } from '@switchboard/events';
import { enqueue } from '@switchboard/queues';
import {
  ProvisioningError,
  SimulatorProvisioningProvider,
} from '../../apps/worker/src/provisioning';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { createTestContext, type TestContext } from '../support/context';
import { ISO_MS, verifyBothSchemes } from '../support/webhooks';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';
import { addJob as addCatalogJob } from '../support/jobs';

// Receptionist provisioning end to end: the API accepts, the worker provisions through the
// simulator, subscribers receive signed receptionist.ready / receptionist.error; transient
// failures are retried (3 attempts) without ever buying a second number; lost and duplicate
// jobs change nothing.
let ctx: TestContext;
let worker: TestWorker;
let receiver: TestReceiver;
let auth: string;
let tenantId: string;
let secret: string;

/** Injected failures per receptionist: the next `times` calls of `op` fail. */
const faults = new Map<string, { op: string; times: number; permanent?: boolean }>();
const provider = new SimulatorProvisioningProvider(20, (op, key) => {
  const f = faults.get(key);
  if (!f || f.op !== op || f.times <= 0) return undefined;
  f.times -= 1;
  return new ProvisioningError(
    'provider_unavailable',
    'The provider is unavailable',
    !!f.permanent,
  );
});

const create = (body: object) =>
  request(ctx.app).post('/api/v1/receptionists').set('Authorization', auth).send(body);
const get = async (id: string) =>
  (await request(ctx.app).get(`/api/v1/receptionists/${id}`).set('Authorization', auth)).body;
const settled = (id: string) =>
  waitFor(`receptionist ${id} to settle`, async () => {
    const r = await get(id);
    return r.status === 'provisioning' ? undefined : r;
  });
const eventsOf = async (id: string) =>
  (await ctx.deps.stores.events.listForTenant(tenantId)).filter((e) => e.receptionistId === id);
const deliveredTo = (id: string, n: number) =>
  waitFor(`${n} deliveries about ${id}`, () => {
    const mine = receiver.requests.filter((r) => JSON.parse(r.body).receptionist_id === id);
    return mine.length >= n ? mine : undefined;
  });

/** A receptionist row committed without its job (as if the API died before adding it). */
const rowOnly = async (areaCode: string | null = null) =>
  (
    await ctx.deps.stores.provisioningLifecycle.create(ctx.deps.knex, {
      tenantId,
      name: 'Back Office',
      greeting: null,
      plan: 'pro',
      areaCode,
      idempotency: null,
    })
  ).receptionist.id;
const addJob = (id: string, attempt = 1, round = 1) =>
  enqueue(ctx.queues, 'provisioning', [{ data: { v: 1, receptionistId: id, round, attempt } }]);
const attemptsOf = async (id: string) =>
  (
    (await ctx.deps.knex('receptionists').where({ id }).first('provisioning_attempts')) as {
      provisioning_attempts: number;
    }
  ).provisioning_attempts;

beforeAll(async () => {
  const cert = generateCertificate('IP:127.0.0.1');
  receiver = await startReceiver(cert, { '/hooks': (_q, res) => res.writeHead(204).end() });
  ctx = await createTestContext();
  ({ auth, tenantId } = await ctx.tenant(['admin']));
  const sub = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({
      url: `https://127.0.0.1:${receiver.port}/hooks`,
      events: ['receptionist.ready', 'receptionist.error'],
    });
  secret = sub.body.signing_secret;
  worker = await startTestWorker(ctx, {
    webhookCa: cert.cert,
    runner: { provisioning: { provider, retryBackoffMs: [50, 50] } },
  });
});
afterAll(async () => {
  await worker?.close();
  await ctx?.close();
  await receiver?.close();
});

describe('through the API', () => {
  let readyId: string;

  it('a new receptionist becomes ready; subscribers get a signed receptionist.ready', async () => {
    const res = await create({ name: 'Front Desk', area_code: '415', plan: 'starter' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'provisioning', phone_number: null, error: null });
    readyId = res.body.id;

    const r = await settled(readyId);
    expect(r).toMatchObject({
      id: readyId,
      name: 'Front Desk',
      status: 'ready',
      plan: 'starter',
      error: null,
      phone_number: expect.stringMatching(/^\+1415[2-9]\d{6}$/),
      assistant_id: expect.stringMatching(/^asst_/),
      provisioned_at: expect.stringMatching(ISO_MS),
    });
    expect(provider.buyCallsFor(readyId)).toBe(1);

    const [delivery] = await deliveredTo(readyId, 1);
    const envelope = JSON.parse(delivery?.body as string);
    expect(envelope).toMatchObject({ event: 'receptionist.ready', receptionist_id: readyId });
    expect(envelope.data).toEqual({
      phone_number: r.phone_number,
      assistant_id: r.assistant_id,
      plan: 'starter',
      provisioned_at: r.provisioned_at,
    });
    expect(validateEventData('receptionist.ready', envelope.data)).toBeNull();
    expect(() =>
      verifyBothSchemes(delivery?.body as string, delivery?.headers ?? {}, secret),
    ).not.toThrow();
  });

  it('without an area code it gets any US number', async () => {
    const res = await create({ name: 'Anywhere' });
    const r = await settled(res.body.id);
    expect(r).toMatchObject({ status: 'ready', plan: 'standard' });
    expect(r.phone_number).toMatch(/^\+1[2-9]\d{9}$/);
  });

  it('area code 999 has no numbers: error at once, receptionist.error; a retry fails again', async () => {
    const res = await create({ name: 'Nowhere', area_code: '999' });
    const id = res.body.id as string;
    const r = await settled(id);
    expect(r).toMatchObject({
      status: 'error',
      phone_number: null,
      assistant_id: null,
      provisioned_at: null,
      error: {
        code: 'number_unavailable',
        message: expect.stringContaining('999'),
        failed_at: expect.stringMatching(ISO_MS),
      },
    });
    expect(await attemptsOf(id)).toBe(1); // permanent: no further attempt

    const [delivery] = await deliveredTo(id, 1);
    const envelope = JSON.parse(delivery?.body as string);
    expect(envelope).toMatchObject({ event: 'receptionist.error', receptionist_id: id });
    expect(envelope.data).toEqual({
      error_code: 'number_unavailable',
      message: r.error.message,
      failed_at: r.error.failed_at,
    });
    expect(validateEventData('receptionist.error', envelope.data)).toBeNull();

    const again = await request(ctx.app)
      .post(`/api/v1/receptionists/${id}/provision`)
      .set('Authorization', auth);
    expect(again.status).toBe(202);
    expect(again.headers.location).toBe(`/api/v1/receptionists/${id}`);
    expect(again.body).toMatchObject({ id, status: 'provisioning', error: null });
    await waitFor('the second receptionist.error', async () =>
      (await eventsOf(id)).length === 2 ? true : undefined,
    );
    expect((await get(id)).status).toBe('error');
    expect((await eventsOf(id)).map((e) => e.type)).toEqual([
      'receptionist.error',
      'receptionist.error',
    ]);
  });

  it('provisioning a receptionist that is not in error is a 409 invalid_state', async () => {
    const res = await request(ctx.app)
      .post(`/api/v1/receptionists/${readyId}/provision`)
      .set('Authorization', auth);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'invalid_state' });
  });
});

describe('retries and recovery', () => {
  it('transient failures are retried; the number bought once is reused', async () => {
    const id = await rowOnly('212');
    faults.set(id, { op: 'createAssistant', times: 2 });
    await addJob(id);
    const r = await settled(id);
    expect(r).toMatchObject({ status: 'ready', phone_number: expect.stringMatching(/^\+1212/) });
    expect(await attemptsOf(id)).toBe(3);
    expect(provider.buyCallsFor(id)).toBe(1);
    expect(provider.numbersSoldFor(id)).toBe(1);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['receptionist.ready']);
  });

  it('three transient failures end in error with the last failure', async () => {
    const id = await rowOnly();
    faults.set(id, { op: 'buyNumber', times: 3 });
    await addJob(id);
    const r = await settled(id);
    expect(r).toMatchObject({ status: 'error', error: { code: 'provider_unavailable' } });
    expect(await attemptsOf(id)).toBe(3);
    expect(provider.buyCallsFor(id)).toBe(3);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['receptionist.error']);
  });

  it('the reconciler provisions a receptionist whose job was lost', async () => {
    const id = await rowOnly('617');
    const r = await settled(id);
    expect(r).toMatchObject({ status: 'ready', phone_number: expect.stringMatching(/^\+1617/) });
  });

  it('duplicate jobs for one receptionist buy one number and emit one event', async () => {
    const id = await rowOnly('305');
    await Promise.all([
      addJob(id, 1),
      addCatalogJob(
        ctx.queues,
        'provisioning',
        { v: 1, receptionistId: id, round: 1, attempt: 1 },
        { jobId: `dup-${id}` },
      ),
      addJob(id, 2),
      addJob(id, 3),
    ]);
    const r = await settled(id);
    expect(r.status).toBe('ready');
    await waitFor('every provisioning job to be processed', async () => {
      const counts = await ctx.queues.provisioning.getJobCounts('waiting', 'active');
      return Object.values(counts).every((n) => n === 0);
    });
    expect(provider.buyCallsFor(id)).toBe(1);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['receptionist.ready']);
  });
});
