import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { addReceptionist } from '../support/receptionist';
import { fakeLookup } from '../support/webhooks';

// If-Match on the edits of webhook subscriptions, receptionists, leads and campaigns
// (docs/API.md, Conditional edits): an ETag per version, 412 with the current ETag on a
// mismatch, `*` for any version, no If-Match as before, and of two edits made with the same
// ETag exactly one applies.
let ctx: TestContext;
let auth: string;
let tenantId: string;
let rcp: string;
let phones = 0;

beforeAll(async () => {
  ctx = await createTestContext(
    {},
    { webhookLookup: fakeLookup({ 'hooks.example.test': ['93.184.215.14'] }) },
  );
  ({ auth, tenantId } = await ctx.tenant(['admin']));
  rcp = await addReceptionist(ctx, tenantId, { phoneNumber: '+14155550100' });
});
afterAll(() => ctx.close());

const call = (method: 'get' | 'post' | 'patch' | 'delete', path: string) =>
  request(ctx.app)[method](path).set('Authorization', auth);
const ETAG = /^W\/"\d+"$/;

/** How one kind of resource is made and edited; `n` makes each edit change something. */
interface Kind {
  name: string;
  make(): Promise<string>;
  edit(path: string, n: number): request.Test;
}

const kinds: Kind[] = [
  {
    name: 'webhook subscription (PATCH)',
    async make() {
      const res = await call('post', '/api/v1/webhooks').send({
        url: 'https://hooks.example.test/in',
      });
      expect(res.status).toBe(201);
      return `/api/v1/webhooks/${res.body.id}`;
    },
    edit: (path, n) => call('patch', path).send({ description: `edit ${n}` }),
  },
  {
    name: 'receptionist (PATCH)',
    make: async () => `/api/v1/receptionists/${await addReceptionist(ctx, tenantId)}`,
    edit: (path, n) => call('patch', path).send({ name: `Desk ${n}` }),
  },
  {
    name: 'lead (PATCH)',
    async make() {
      phones++;
      const res = await call('post', '/api/v1/leads').send({
        name: 'Dana',
        phone: `+1415555${String(1000 + phones)}`,
      });
      expect(res.status).toBe(201);
      return `/api/v1/leads/${res.body.id}`;
    },
    edit: (path, n) => call('patch', path).send({ notes: `edit ${n}` }),
  },
  {
    name: 'campaign (POST cancel)',
    async make() {
      const res = await call('post', '/api/v1/campaigns').send({
        name: 'Spring',
        receptionist_id: rcp,
        message: 'Hello',
        recipients: { phones: ['+14155550123'] },
      });
      expect(res.status).toBe(202);
      return `/api/v1/campaigns/${res.body.id}`;
    },
    edit: (path) => call('post', `${path}/cancel`),
  },
];

const etagOf = async (path: string): Promise<string> => {
  const res = await call('get', path);
  expect(res.status).toBe(200);
  expect(res.headers.etag).toMatch(ETAG);
  return res.headers.etag as string;
};

describe.each(kinds)('$name', (kind) => {
  it('a stale or foreign ETag is a 412 with the current ETag, and nothing changes', async () => {
    const path = await kind.make();
    const before = await call('get', path);
    const current = before.headers.etag as string;
    expect(current).toMatch(ETAG);
    for (const ifMatch of ['"nope"', 'W/"999999"']) {
      const res = await kind.edit(path, 1).set('If-Match', ifMatch);
      expect(res.status).toBe(412);
      expect(res.headers.etag).toBe(current);
      expect(res.body).toEqual({
        error: {
          type: 'invalid_request_error',
          code: 'precondition_failed',
          message: expect.stringContaining(current),
          doc_url: 'docs/API.md#error-precondition_failed',
        },
        request_id: res.headers['x-request-id'],
      });
    }
    const after = await call('get', path);
    expect(after.headers.etag).toBe(current);
    expect(after.body).toEqual(before.body);
  });

  it('the current ETag applies the edit, whose answer carries the next ETag', async () => {
    const path = await kind.make();
    const first = await etagOf(path);
    const res = await kind.edit(path, 1).set('If-Match', first);
    expect(res.status).toBe(200);
    expect(res.headers.etag).toMatch(ETAG);
    expect(res.headers.etag).not.toBe(first);
    expect(await etagOf(path)).toBe(res.headers.etag);
    // The ETag read before the edit is stale now.
    const stale = await kind.edit(path, 2).set('If-Match', first);
    expect(stale.status).toBe(412);
    expect(stale.headers.etag).toBe(res.headers.etag);
  });

  it('a strong tag, or a list naming the current version, matches (weak comparison)', async () => {
    const path = await kind.make();
    const current = await etagOf(path);
    const res = await kind.edit(path, 1).set('If-Match', `"nope", ${current.slice(2)}`);
    expect(res.status).toBe(200);
  });

  it.each([
    ['If-Match: *', '*'],
    ['no If-Match', undefined],
  ])('%s applies the edit whatever the version', async (_name, ifMatch) => {
    const path = await kind.make();
    const edit = kind.edit(path, 1);
    const res = await (ifMatch === undefined ? edit : edit.set('If-Match', ifMatch));
    expect(res.status).toBe(200);
  });

  it('a malformed If-Match is a 400 naming it', async () => {
    const path = await kind.make();
    const res = await kind.edit(path, 1).set('If-Match', 'nope');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'If-Match' });
  });

  it('an id that does not exist is a 404, If-Match or not', async () => {
    const path = await kind.make();
    const missing = path.replace(/[0-9a-f]{4}$/, (s) => (s === '0000' ? '1111' : '0000'));
    for (const ifMatch of ['W/"1"', '*']) {
      const res = await kind.edit(missing, 1).set('If-Match', ifMatch);
      expect(res.status).toBe(404);
    }
  });

  it('of two edits made with the same ETag at once, exactly one applies', async () => {
    for (let round = 0; round < 3; round++) {
      const path = await kind.make();
      const current = await etagOf(path);
      const answers = await Promise.all([
        kind.edit(path, 1).set('If-Match', current),
        kind.edit(path, 2).set('If-Match', current),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 412]);
      const [won, lost] = answers[0]?.status === 200 ? answers : [...answers].reverse();
      expect(lost?.headers.etag).toBe(won?.headers.etag);
      expect(await etagOf(path)).toBe(won?.headers.etag);
    }
  });

  it('a GET with If-None-Match still answers the resource (no 304 on a version)', async () => {
    const path = await kind.make();
    const res = await call('get', path).set('If-None-Match', await etagOf(path));
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(path.split('/').pop());
  });
});

describe('DELETE /api/v1/webhooks/{id}', () => {
  const make = () => (kinds[0] as Kind).make();

  it('with a stale ETag is a 412 with the current one; the subscription stays', async () => {
    const path = await make();
    const first = await etagOf(path);
    expect((await call('patch', path).send({ description: 'x' })).status).toBe(200);
    const res = await call('delete', path).set('If-Match', first);
    expect(res.status).toBe(412);
    expect(res.body.error.code).toBe('precondition_failed');
    expect(res.headers.etag).toBe(await etagOf(path));
  });

  it('with the current ETag or * deletes it', async () => {
    for (const ifMatch of [null, '*']) {
      const path = await make();
      const res = await call('delete', path).set('If-Match', ifMatch ?? (await etagOf(path)));
      expect(res.status).toBe(204);
      expect((await call('get', path)).status).toBe(404);
      expect((await call('delete', path).set('If-Match', '*')).status).toBe(404);
    }
  });

  it('races a PATCH made with the same ETag: exactly one applies', async () => {
    for (let round = 0; round < 3; round++) {
      const path = await make();
      const current = await etagOf(path);
      const [patched, deleted] = await Promise.all([
        call('patch', path).set('If-Match', current).send({ description: 'mine' }),
        call('delete', path).set('If-Match', current),
      ]);
      // Once deleted, the PATCH finds nothing to edit: a 404, preconditions or not.
      expect([patched.status, deleted.status]).toEqual(
        deleted.status === 204 ? [404, 204] : [200, 412],
      );
    }
  });
});

describe('what counts as a change', () => {
  it("a lead PATCH that changes nothing keeps the lead's ETag", async () => {
    const path = await (kinds[2] as Kind).make();
    const current = await etagOf(path);
    const res = await call('patch', path).set('If-Match', current).send({ name: 'Dana' });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(current);
  });

  it('enabling a subscription (a change of is_active) counts as a change', async () => {
    const path = await (kinds[0] as Kind).make();
    const current = await etagOf(path);
    const res = await call('post', `${path}/enable`);
    expect(res.status).toBe(200);
    expect(res.headers.etag).not.toBe(current);
    expect(await etagOf(path)).toBe(res.headers.etag);
  });

  it("a lead import that changes a lead changes the lead's version", async () => {
    const path = await (kinds[2] as Kind).make();
    const id = path.split('/').pop() as string;
    const lead = await ctx.deps.stores.leads.get(ctx.deps.knex, tenantId, id, true);
    if (!lead) throw new Error('lead not found');
    const current = await etagOf(path);
    await ctx.deps.stores.leads.updateMany(
      ctx.deps.knex,
      [{ ...lead, notes: 'from the import', changed: true }],
      null,
      new Date(),
    );
    expect(await etagOf(path)).not.toBe(current);
  });
});
