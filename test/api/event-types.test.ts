import request from 'supertest';
import { EVENT_TYPES, validateEventData } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';
import { dereferenced } from '../support/openapi-doc';

// GET /event-types and the OpenAPI `webhooks` section come from one source: they agree.
let ctx: TestContext;
let auth: string;
beforeAll(async () => {
  ctx = await createTestContext();
  ({ auth } = await ctx.tenant(['read']));
});
afterAll(() => ctx.close());

interface Entry {
  name: string;
  description: string;
  schema: object;
  example: { event: string; data: unknown };
}
type Doc = {
  webhooks: Record<
    string,
    {
      post: {
        description: string;
        requestBody: {
          content: {
            'application/json': { schema: { properties: { data: object } }; example: object };
          };
        };
      };
    }
  >;
};

describe('GET /api/v1/event-types', () => {
  it('lists every event with a read key; the same events, schemas and examples as the document', async () => {
    const res = await request(ctx.app).get('/api/v1/event-types').set('Authorization', auth);
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(false);
    const entries = res.body.data as Entry[];
    expect(entries.map((e) => e.name).sort()).toEqual([...EVENT_TYPES].sort());
    const raw = (await request(ctx.app).get('/api/v1/openapi.json').expect(200)).body as Doc;
    const doc = dereferenced(raw);
    expect(Object.keys(doc.webhooks).sort()).toEqual(entries.map((e) => e.name).sort());
    for (const entry of entries) {
      const post = doc.webhooks[entry.name]!.post;
      const content = post.requestBody.content['application/json'];
      expect(post.description.startsWith(entry.description)).toBe(true);
      expect(content.schema.properties.data).toEqual(entry.schema);
      expect(content.example).toEqual(entry.example);
      expect(entry.example.event).toBe(entry.name);
      // The example's data fits the schema it is listed with.
      expect([entry.name, validateEventData(entry.name, entry.example.data)]).toEqual([
        entry.name,
        null,
      ]);
    }
  });

  it('filters by name', async () => {
    const res = await request(ctx.app)
      .get('/api/v1/event-types?name=call.completed')
      .set('Authorization', auth);
    expect(res.body.data.map((e: Entry) => e.name)).toEqual(['call.completed']);
  });

  it('needs a key (401)', async () => {
    expect((await request(ctx.app).get('/api/v1/event-types')).status).toBe(401);
  });
});
