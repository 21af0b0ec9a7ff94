import type { Knex } from 'knex';

/**
 * Asynchronous commits, per transaction. Connections commit durably (a commit returns once
 * its WAL is on disk); a transaction may opt out only when every write in it can be redone
 * harmlessly from other committed rows, because a Postgres crash can lose the last few
 * hundred milliseconds of asynchronous commits (never corrupt anything). The list of
 * durable and asynchronous writes, with the reasons, is in docs/DECISIONS.md.
 *
 * Never for a claim that guards an external side effect that must not be repeated (a dial,
 * an SMS send, a number purchase), nor for facts reported from outside (telephony reports),
 * nor for anything that backs an API answer.
 */
export async function commitAsynchronously(trx: Knex.Transaction): Promise<void> {
  await trx.raw('SET LOCAL synchronous_commit = off');
}

/**
 * The same for a single autocommit statement, without the three extra round trips of
 * BEGIN / SET LOCAL / COMMIT: put this CTE in the statement's WITH list and read it in the
 * statement (e.g. `FROM … , async_commit`). `set_config(…, true)` is SET LOCAL: it lasts
 * until the end of the statement's own transaction, which is when Postgres reads it. A
 * statement that ends up writing nothing needs no flush at all, so it does not matter
 * whether the planner evaluated the CTE then.
 */
export const ASYNC_COMMIT_CTE =
  "async_commit AS (SELECT set_config('synchronous_commit', 'off', true) AS setting)";
