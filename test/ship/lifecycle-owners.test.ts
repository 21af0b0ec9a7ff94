import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sourceFiles, stateUpdates, type StateUpdate } from '../support/state-updates';

/**
 * Each lifecycle is one module (docs/decisions/0104-one-module-per-lifecycle.md): the state of
 * its rows is changed by that module's statements and nowhere else. This reads the sources
 * (apps and packages, not tests, not migrations) and fails on an UPDATE that sets a state
 * column of one of these tables outside its owner, by raw SQL or a knex builder. A writer
 * that maps domain fields to columns (callColumns) hides its keys from the scan: the only one
 * that can write a status is inside its lifecycle (CallLifecycle's), and no store exposes it.
 */
const STORES = 'packages/db/src/stores';
const OWNERS: Record<string, { columns: readonly string[]; owners: readonly string[] }> = {
  webhook_subscriptions: {
    columns: [
      'is_active',
      'disabled_reason',
      'disabled_at',
      'failing_level',
      'consecutive_failures',
    ],
    owners: [`${STORES}/subscription-lifecycle.ts`],
  },
  webhook_deliveries: {
    columns: ['status'],
    owners: [`${STORES}/delivery-lifecycle.ts`, `${STORES}/delivery-lifecycle-sql.ts`],
  },
  // A recovery's own running → completed (not the subscription's state).
  webhook_recoveries: { columns: ['status'], owners: [`${STORES}/webhook-recoveries-store.ts`] },
  receptionists: {
    columns: ['status', 'provisioning_round', 'provisioning_attempts', 'provisioning_locked_until'],
    owners: [`${STORES}/provisioning-lifecycle.ts`],
  },
  calls: { columns: ['status'], owners: [`${STORES}/call-lifecycle.ts`] },
  lead_imports: { columns: ['status'], owners: [`${STORES}/lead-import-lifecycle.ts`] },
  sms_messages: { columns: ['status'], owners: [`${STORES}/sms-lifecycle.ts`] },
  campaigns: { columns: ['status'], owners: [`${STORES}/campaign-lifecycle.ts`] },
  campaign_recipients: { columns: ['state'], owners: [`${STORES}/campaign-lifecycle.ts`] },
  test_data_deletions: {
    columns: ['status'],
    owners: [`${STORES}/test-data-deletion-lifecycle.ts`],
  },
};

/**
 * Updates allowed outside their owner, each with its reason. An entry names the file, the
 * table and the form; `unseen` is an UPDATE of a guarded table whose SET the scan cannot read.
 */
const ALLOWED: ReadonlyArray<Pick<StateUpdate, 'file' | 'table' | 'form'> & { why: string }> = [];

const root = join(__dirname, '..', '..');
const files = sourceFiles(
  root,
  ['apps', 'packages'],
  (rel) =>
    /\/src\//.test(rel) &&
    /\.tsx?$/.test(rel) &&
    !/\.test\.tsx?$/.test(rel) &&
    !rel.includes('/migrations/') &&
    // The SDK and the portal page are HTTP clients: their `update({ is_active })` is a request.
    !/^(packages\/sdk|apps\/portal)\//.test(rel),
);
const guarded = Object.fromEntries(Object.entries(OWNERS).map(([t, o]) => [t, o.columns]));
const scan = (file: string, text: string) => stateUpdates(file, text, guarded);
const allowed = (u: StateUpdate) =>
  OWNERS[u.table]?.owners.includes(u.file) ||
  ALLOWED.some((a) => a.file === u.file && a.table === u.table && a.form === u.form);

test('no state column is updated outside its lifecycle module', () => {
  expect(files.length).toBeGreaterThan(100);
  const strays = files
    .flatMap((file) => scan(file, readFileSync(join(root, file), 'utf8')))
    .filter((u) => !allowed(u))
    .map((u) => `${u.file}:${u.line} ${u.form} ${u.table} ${u.columns.join(', ')}`);
  expect(strays).toEqual([]);
});

test('every owner and allowed exception still exists and still updates its table', () => {
  const all = files.flatMap((file) => scan(file, readFileSync(join(root, file), 'utf8')));
  for (const [table, { owners }] of Object.entries(OWNERS)) {
    for (const owner of owners) expect(files).toContain(owner);
    expect(all.some((u) => u.table === table && owners.includes(u.file))).toBe(true);
  }
  for (const a of ALLOWED) {
    expect(all.some((u) => u.file === a.file && u.table === a.table && u.form === a.form)).toBe(
      true,
    );
  }
});

// The scan itself: each form it must see, in a file that owns nothing.
describe('the scan', () => {
  const stray = (text: string) => scan('apps/x/src/stray.ts', text).filter((u) => !allowed(u));

  test('sees raw SQL, aliased or not, and ignores columns it only compares', () => {
    expect(stray("db.raw(`UPDATE campaigns c SET status = 'running' WHERE id = ?`)")).toHaveLength(
      1,
    );
    expect(
      stray('db.raw(`UPDATE webhook_subscriptions\n SET url = ?, is_active = true`)'),
    ).toHaveLength(1);
    expect(stray("db.raw(`UPDATE campaigns SET sent = 1 WHERE status = 'running'`)")).toEqual([]);
    expect(stray('db.raw(`UPDATE sms_messages s ${helper()} WHERE id = ?`)')).toMatchObject([
      { form: 'unseen', table: 'sms_messages' },
    ]);
  });

  test('sees knex builders: a literal, a constant, an object built beforehand', () => {
    expect(
      stray("await db('webhook_deliveries').where({ id }).update({ status: 'x' });"),
    ).toHaveLength(1);
    expect(
      stray("const TABLE = 'campaigns';\nawait trx(TABLE).where({ id }).update({ status: 'x' });"),
    ).toHaveLength(1);
    const built = `const TABLE = 'webhook_subscriptions';
      const set: Record<string, unknown> = { updated_at: now };
      if (off) Object.assign(set, { is_active: false });
      await db(TABLE).where(where).update(set);`;
    expect(stray(built)).toMatchObject([
      { table: 'webhook_subscriptions', columns: ['is_active'] },
    ]);
    expect(stray("await db('campaigns').where({ id }).update({ name: 'x' });")).toEqual([]);
  });
});
