import { createKnex, type Knex } from '@switchboard/db';
import { SERVER_URL } from '../support/env';
import { waitFor } from '../support/wait';

// DATABASE_POOL_IDLE_MS (docs/configuration.md): a pool built from a process's settings
// closes a connection nobody used for that long; a pool built without it keeps tarn's 30 s.
// Both pools connect, and the first one's idle connection closing is the signal: the other's,
// 30 s from its close, is still open then.
interface Pool {
  numFree(): number;
  numUsed(): number;
}
const poolOf = (knex: Knex): Pool => (knex.client as { pool: Pool }).pool;

it('closes a connection idle for databasePoolIdleMs, and only that pool', async () => {
  const short = createKnex({ databaseUrl: SERVER_URL, databasePoolIdleMs: 200 });
  const usual = createKnex(SERVER_URL);
  try {
    await Promise.all([short.raw('SELECT 1'), usual.raw('SELECT 1')]);
    expect(poolOf(short).numFree()).toBe(1);
    // Under tarn's 30 s: a pool that ignored the setting fails here instead of passing late.
    await waitFor('the idle connection closed', () => poolOf(short).numFree() === 0, {
      timeoutMs: 20_000,
    });
    expect(poolOf(short).numUsed()).toBe(0);
    expect(poolOf(usual).numFree()).toBe(1);
  } finally {
    await Promise.all([short.destroy(), usual.destroy()]);
  }
});
