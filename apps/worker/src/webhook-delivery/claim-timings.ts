/**
 * How long a claim and an in-flight slot outlive the HTTP deadline: enough to record the
 * outcome (a batched statement: milliseconds; a record slower than this only risks sending
 * again, with the same event id). An attempt of a worker killed mid-attempt runs again after
 * WEBHOOK_TIMEOUT_MS + this, plus at most one lapse check (LAPSE_CHECK_MS, 0.5 s) and the time
 * to send: within WEBHOOK_TIMEOUT_MS + 5 s.
 */
export const CLAIM_MARGIN_MS = 3_000;
/**
 * The time an attempt needs left of its claim: its HTTP deadline and this. A pre-claim
 * (made as long as a claim) with less left is renewed instead of taken as it is; so a
 * pre-claim is taken as it is within a second of its fan-out, the time its event job
 * normally takes to start (docs/DECISIONS.md, Row work per delivery).
 */
const PRECLAIM_LEFT_MARGIN_MS = 2_000;

/** How long a claim (and a pre-claim) lasts, and how much of a pre-claim a taker needs. */
export interface ClaimTimings {
  lockMs: number;
  preclaimLeftMs: number;
}

export const claimTimings = (webhookTimeoutMs: number): ClaimTimings => ({
  lockMs: webhookTimeoutMs + CLAIM_MARGIN_MS,
  preclaimLeftMs: webhookTimeoutMs + PRECLAIM_LEFT_MARGIN_MS,
});
