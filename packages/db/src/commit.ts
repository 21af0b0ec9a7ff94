/**
 * Asynchronous commits, opted into by a statement. Connections commit durably (a commit
 * returns once its WAL is on disk); a write may opt out only when it can be redone
 * harmlessly from other committed rows, because a Postgres crash can lose the last few
 * hundred milliseconds of asynchronous commits (never corrupt anything). The list of
 * durable and asynchronous writes, with the reasons, is in
 * docs/decisions/0036-durable-and-asynchronous-commits.md. Never for a
 * claim that guards an external side effect that must not be repeated (a dial, an SMS send,
 * a number purchase), nor for facts reported from outside (telephony reports), nor for
 * anything that backs an API answer.
 *
 * Put this CTE in the statement's WITH list and read it in the statement (e.g. `FROM … ,
 * async_commit`). `set_config(…, true)` is SET LOCAL: it lasts until the end of the
 * statement's transaction, which is when Postgres reads it, so it makes the commit of the
 * whole transaction the statement runs in asynchronous (the relay's claim and fan-out),
 * without a round trip of its own. A statement that ends up writing nothing needs no flush
 * at all, so it does not matter whether the planner evaluated the CTE then.
 */
export const ASYNC_COMMIT_CTE =
  "async_commit AS (SELECT set_config('synchronous_commit', 'off', true) AS setting)";
