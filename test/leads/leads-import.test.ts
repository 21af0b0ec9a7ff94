import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { runImport, stageFile } from '@switchboard/leads';
import { Readable } from 'node:stream';
import { createTestContext, type TestContext } from '../support/context';
import { csv } from '../support/leads';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';

// POST /api/v1/leads/import and GET /api/v1/leads/imports/{id}: the shipped sample file
// (BOM, CRLF, quoted commas and newlines, bad and duplicate rows) imported by the real
// worker in small batches, so duplicates straddle batches; then the file-level refusals.
// Imports run in the worker: a busy machine may take a while (bounded waits below).
jest.setTimeout(180_000);
const SAMPLE = readFileSync(path.resolve(__dirname, '../../docs/examples/leads.csv'));
let ctx: TestContext;
let worker: TestWorker;

beforeAll(async () => {
  ctx = await createTestContext();
  worker = await startTestWorker(ctx, { runner: { leadImportBatchSize: 4 } });
});
afterAll(async () => {
  await worker?.close();
  await ctx?.close();
});

const upload = (auth: string, body: string | Buffer, type = 'text/csv') =>
  request(ctx.app)
    .post('/api/v1/leads/import')
    .set('Authorization', auth)
    .set('Content-Type', type)
    .send(body);
const getImport = (auth: string, id: string) =>
  request(ctx.app).get(`/api/v1/leads/imports/${id}`).set('Authorization', auth);
// Generous bounds: the machine may be busy; these wait on a positive signal only.
const completed = (auth: string, id: string) =>
  waitFor(
    `import ${id} completed`,
    async () => {
      const res = await getImport(auth, id);
      return res.body.status === 'completed' && res.body;
    },
    { timeoutMs: 90_000, intervalMs: 50 },
  );

/** The sample file's leads once imported, whatever the batch size. */
const SAMPLE_LEADS = [
  {
    name: 'Kim Lee',
    phone: null,
    email: 'KIM.LEE@example.com',
    status: 'contacted',
    notes: 'Asked for a call back\r\nafter 5pm',
    tags: [],
    metadata: {},
  },
  {
    name: 'Sam Ortiz',
    phone: '+14155550124',
    email: 'sam@example.com',
    status: 'contacted',
    notes: null,
    tags: ['vip'],
    metadata: { Company: 'Ortiz Plumbing' },
  },
  {
    // Row 6 came last: its values win; its blanks keep row 1's.
    name: 'Dana W.',
    phone: '+14155550123',
    email: 'dana@example.com',
    status: 'qualified',
    notes: 'Wants a quote, boiler service',
    tags: ['boiler', 'vip'],
    metadata: { Company: 'Whitfield & Co' },
  },
  {
    name: 'Lena Fischer',
    phone: '+4930901820',
    email: 'lena@example.de',
    status: 'new',
    notes: null,
    tags: [],
    metadata: { Company: 'Fischer GmbH, Berlin' },
  },
  {
    name: 'Ravi Patel',
    phone: '+442079460958',
    email: 'ravi@example.co.uk',
    status: 'won',
    notes: 'He said "yes" on the phone',
    tags: [],
    metadata: { Company: 'Patel Ltd' },
  },
];
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);
const leadsOf = async (tenantId: string) =>
  (
    await ctx.deps
      .knex('leads')
      .where({ tenant_id: tenantId, source: 'csv_import' })
      .select('name', 'phone', 'email', 'status', 'notes', 'tags', 'metadata')
  ).sort(byName);

const SAMPLE_ERRORS = [
  { row: 4, field: 'phone', message: 'phone must be an international number, e.g. +14155550123' },
  { row: 5, field: 'email', message: expect.stringContaining('email') },
  { row: 7, field: 'status', message: expect.stringContaining('status must be one of') },
  { row: 8, field: 'phone', message: 'A row needs a phone or an email (or both)' },
  { row: 12, field: null, message: 'The row has 8 fields; the header has 7' },
];

describe('CSV import', () => {
  it('imports the sample file: exact counts, row errors, last row wins, progress shown', async () => {
    const { auth, tenantId } = await ctx.tenant(['write']);
    const res = await upload(auth, SAMPLE);
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/api/v1/leads/imports/${res.body.id}`);
    expect(res.body).toMatchObject({ status: 'processing', total_rows: 12 });
    expect(res.body.id).toMatch(/^imp_/);
    const done = await completed(auth, res.body.id);
    expect(done).toMatchObject({
      total_rows: 12,
      processed_rows: 12,
      created: 5,
      updated: 0,
      skipped: 5,
      duplicates: 2,
      failure_reason: null,
      errors: SAMPLE_ERRORS,
    });
    expect(done.completed_at).toEqual(expect.any(String));

    expect(await leadsOf(tenantId)).toEqual([...SAMPLE_LEADS].sort(byName));
    const leads = await ctx.deps.knex('leads').where({ tenant_id: tenantId });
    const dana = leads.find((l) => l.phone === '+14155550123');
    const kim = leads.find((l) => l.phone === null);

    // One lead.created per lead; the duplicates in later batches updated their lead.
    const events = await ctx.deps.stores.events.listForTenant(tenantId);
    const created = events.filter((e) => e.type === 'lead.created');
    expect(created.map((e) => e.data.lead_id).sort()).toEqual(leads.map((l) => l.id).sort());
    expect(created.every((e) => e.data.source === 'csv_import')).toBe(true);
    const updated = events.filter((e) => e.type === 'lead.updated');
    expect(updated.map((e) => e.data.lead_id).sort()).toEqual([dana.id, kim.id].sort());
  });

  it('a second import of the same file updates instead of creating', async () => {
    const { auth, tenantId } = await ctx.tenant(['write']);
    await completed(auth, (await upload(auth, SAMPLE)).body.id);
    const again = await completed(auth, (await upload(auth, SAMPLE)).body.id);
    expect(again).toMatchObject({ created: 0, updated: 5, duplicates: 2, skipped: 5 });
    expect(await ctx.deps.knex('leads').where({ tenant_id: tenantId })).toHaveLength(5);
  });

  it('the outcome does not depend on the batch size (in-process run, one batch)', async () => {
    const { tenantId } = await ctx.tenant(['write']);
    // Staged and finalised without a job (as the CLI does), then run here in one batch.
    const { leadImports, leadImportLifecycle } = ctx.deps.stores;
    const staged = await stageFile(ctx.deps, tenantId, Readable.from([SAMPLE]), 'cli');
    await leadImportLifecycle.finalize(ctx.deps.knex, staged.importId, staged, null);
    expect(await runImport(ctx.deps, staged.importId, { batchSize: 1000 })).toBe('completed');
    const done = await leadImports.findById(ctx.deps.knex, staged.importId);
    expect(done).toMatchObject({ created: 5, updated: 0, skipped: 5, duplicates: 2 });
    expect(await leadsOf(tenantId)).toEqual([...SAMPLE_LEADS].sort(byName));
    // Within one batch the duplicates fold into one write: five lead.created, nothing else.
    const events = await ctx.deps.stores.events.listForTenant(tenantId);
    expect(events.map((e) => e.type)).toEqual(Array(5).fill('lead.created'));
  });

  it('an import whose job was lost is picked up by the reconciler', async () => {
    const { auth, tenantId } = await ctx.tenant(['write']);
    // Finalised but never queued, like an API that died between its commit and the enqueue.
    const imports = ctx.deps.stores.leadImportLifecycle;
    const staged = await stageFile(ctx.deps, tenantId, Readable.from([SAMPLE]), 'api');
    await imports.finalize(ctx.deps.knex, staged.importId, staged, null);
    expect(await completed(auth, staged.importId)).toMatchObject({ created: 5, skipped: 5 });
  });

  it('an import that keeps failing is given up as failed, with its reason', async () => {
    const { auth, tenantId } = await ctx.tenant(['write']);
    const imports = ctx.deps.stores.leadImportLifecycle;
    const staged = await stageFile(ctx.deps, tenantId, Readable.from([SAMPLE]), 'cli');
    await imports.finalize(ctx.deps.knex, staged.importId, staged, null);
    // Five runs that died before committing a batch.
    for (let i = 0; i < 5; i++) await imports.startRun(ctx.deps.knex, staged.importId);
    expect(await runImport(ctx.deps, staged.importId)).toBe('failed');
    const res = await getImport(auth, staged.importId);
    expect(res.body).toMatchObject({ status: 'failed', processed_rows: 0, completed_at: null });
    expect(res.body.failure_reason).toMatch(/no progress/);
    // Never failed with an empty error list: the file-level reason is row 0.
    expect(res.body.errors).toEqual([
      { row: 0, field: null, message: res.body.failure_reason as string },
    ]);
    expect(await runImport(ctx.deps, staged.importId)).toBe('not_processing');
  });

  it('shows progress while a large file runs, and counts a duplicate across batches once', async () => {
    const { auth, tenantId } = await ctx.tenant(['write']);
    const rows = [['phone', 'name']];
    for (let i = 0; i < 400; i++) rows.push([`+1646555${String(1000 + i)}`, `Person ${i}`]);
    rows.push(['+16465551000', 'Person 0 again']);
    const res = await upload(auth, csv(rows));
    expect(res.body.total_rows).toBe(401);
    // 101 batches of 4 rows, each its own transaction: the import is seen half-way.
    const partial = await waitFor(
      'progress between 0 and the end',
      async () => {
        const body = (await getImport(auth, res.body.id)).body;
        return body.status === 'processing' && body.processed_rows > 0 && body;
      },
      { timeoutMs: 60_000 },
    );
    expect(partial.processed_rows).toBeLessThan(401);
    expect(partial.created).toBeLessThanOrEqual(partial.processed_rows);
    const done = await completed(auth, res.body.id);
    expect(done).toMatchObject({ processed_rows: 401, created: 400, duplicates: 1, skipped: 0 });
    const lead = await ctx.deps.knex('leads').where({ tenant_id: tenantId, phone: '+16465551000' });
    expect(lead).toHaveLength(1);
    expect(lead[0].name).toBe('Person 0 again');
  });

  it('refuses files that cannot be imported', async () => {
    const { auth } = await ctx.tenant(['write']);
    const cases: Array<[string | Buffer, number, string, string?]> = [
      ['', 400, 'invalid_parameter', 'body'],
      ['Dana,+14155550123\r\nSam,+14155550124\r\n', 400, 'invalid_parameter', 'body'],
      ['company,city\nAcme,Paris\n', 400, 'invalid_parameter', 'body'],
      ['name,phone\n', 400, 'invalid_parameter', 'body'],
      ['name,Phone,PHONE\nx,+14155550123,\n', 400, 'invalid_parameter', 'body'],
      ['name,phone\n"never closed,+14155550123\n', 400, 'invalid_parameter', 'body'],
      // Metadata column names are metadata keys: storable, at most 100 characters, not reserved.
      ['phone,ci\u0000ty\n+14155550123,Paris\n', 400, 'invalid_parameter', 'body'],
      [`phone,${'k'.repeat(101)}\n+14155550123,x\n`, 400, 'invalid_parameter', 'body'],
      ['phone,__proto__\n+14155550123,x\n', 400, 'invalid_parameter', 'body'],
      ['phone,constructor\n+14155550123,x\n', 400, 'invalid_parameter', 'body'],
    ];
    for (const [body, status, code, param] of cases) {
      const res = await upload(auth, body);
      expect([res.status, res.body.error?.code, res.body.error?.param]).toEqual([
        status,
        code,
        param,
      ]);
    }
    const json = await upload(auth, '{"phone": "+14155550123"}', 'application/json');
    expect([json.status, json.body.error.code]).toEqual([415, 'unsupported_media_type']);
    const latin1 = await upload(auth, 'phone\n+14155550123\n', 'text/csv; charset=latin1');
    expect(latin1.status).toBe(415);
    const header = 'phone,notes\n';
    const big = Buffer.alloc(20 * 1024 * 1024 + 1, 'a'.charCodeAt(0));
    big.write(header);
    const tooLarge = await upload(auth, big);
    expect([tooLarge.status, tooLarge.body.error.code]).toEqual([413, 'payload_too_large']);
    // Nothing staged survived any of them.
    const left = await ctx.deps.knex('lead_imports').where({ status: 'uploading' });
    expect(left).toHaveLength(0);
    const reader = await ctx.keyFor((await ctx.tenant()).tenantId, ['read']);
    expect((await upload(reader.auth, SAMPLE)).status).toBe(403);
  });

  it('a metadata column name of exactly 100 characters is accepted', async () => {
    const { auth } = await ctx.tenant(['write']);
    const key = 'k'.repeat(100);
    const res = await upload(auth, `phone,${key}\n+14155550123,x\n`);
    expect(res.status).toBe(202);
    const done = await completed(auth, res.body.id);
    expect(done).toMatchObject({ created: 1, skipped: 0, errors: [] });
  });

  it('a file of exactly 20 MiB is accepted', async () => {
    const { auth } = await ctx.tenant(['write']);
    // Rows of 100 KiB: each one's notes are too long, so each is a row error.
    const size = 20 * 1024 * 1024;
    const body = Buffer.alloc(size, 'n');
    let at = body.write('phone,notes\n');
    let rows = 0;
    for (; at < size - 100; at += 100 * 1024) {
      body.write(`\n+1415555${String(1000 + rows++)},`, at);
    }
    body.write('\n', size - 1);
    const res = await upload(auth, body);
    expect(res.status).toBe(202);
    expect(res.body.total_rows).toBe(rows);
    const done = await completed(auth, res.body.id);
    expect(done).toMatchObject({ skipped: rows, created: 0 });
    expect(done.errors[0]).toMatchObject({ row: 1, field: 'notes' });
  });

  it('Idempotency-Key: the same file replays the import; another file is a 422', async () => {
    const { auth } = await ctx.tenant(['write']);
    const first = await upload(auth, SAMPLE).set('Idempotency-Key', 'import-1');
    const again = await upload(auth, SAMPLE).set('Idempotency-Key', 'import-1');
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await upload(auth, csv([['phone'], ['+14155550123']])).set(
      'Idempotency-Key',
      'import-1',
    );
    expect(other.status).toBe(422);
    const imports = await ctx.deps.knex('lead_imports').whereNot('status', 'uploading');
    expect(imports.filter((i) => i.idempotency_key === 'import-1')).toHaveLength(1);
    expect(await ctx.deps.knex('lead_imports').where({ status: 'uploading' })).toHaveLength(0);
  });

  it('another tenant cannot see an import', async () => {
    const { auth } = await ctx.tenant(['write']);
    const res = await upload(auth, SAMPLE);
    const other = await ctx.tenant(['read']);
    expect((await getImport(other.auth, res.body.id)).status).toBe(404);
    expect((await getImport(auth, 'imp_nope')).status).toBe(404);
    expect((await getImport(auth, 'nope')).status).toBe(400);
  });
});
