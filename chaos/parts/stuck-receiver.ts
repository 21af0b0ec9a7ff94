import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import type { ChaosPart, PartResult } from '../part';
import { accountProblems, ackedRefs, awaitDelivery, eventsOfMessages } from '../harness/accounting';
import { percentile, pool, tally, type Outcome } from '../harness/client';
import { intEnv, secs } from '../harness/env';
import { callSubscriber, startStack } from '../harness/stack';

export interface StuckReceiverOptions {
  /** call.started messages per tenant. */
  events: number;
  /** Ingestion is spread over this long, so that dead attempts time out and retry meanwhile. */
  spreadMs: number;
  /** The attempt timeout (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  log(line: string): void;
}

/** Worker slots, and the per-subscription cap they give (WORKER_CONCURRENCY / 2). */
const CONCURRENCY = 8;
const PER_SUBSCRIPTION = CONCURRENCY / 2;

/**
 * A receiver that never answers holds only its own deliveries: tenant A has a subscription
 * to an endpoint that accepts requests and never answers, and one to a healthy endpoint;
 * tenant B has a healthy one. `events` calls are ingested for each tenant. Every acked event
 * must reach both healthy endpoints without ever waiting for the dead one (each delivery
 * arrives sooner than the attempt timeout after its 202); the dead endpoint never has more
 * than its per-subscription cap of attempts open, and its deliveries wait, none lost.
 */
export async function runStuckReceiver(opts: StuckReceiverOptions): Promise<PartResult> {
  const { events, spreadMs, timeoutMs, log } = opts;
  const open = new Set<ServerResponse>();
  let maxOpen = 0;
  const arrived = new Map<string, number>();
  const ok = (req: IncomingMessage, res: ServerResponse) => {
    const id = req.headers['x-service-event-id'] as string;
    if (!arrived.has(id)) arrived.set(id, Date.now());
    res.writeHead(200).end();
  };
  const stack = await startStack({
    routes: {
      '/stuck': (_req, res) => {
        open.add(res);
        maxOpen = Math.max(maxOpen, open.size);
        res.on('close', () => open.delete(res));
      },
      '/ok-a': ok,
      '/ok-b': ok,
    },
    workerEnv: { WORKER_CONCURRENCY: String(CONCURRENCY), WEBHOOK_TIMEOUT_MS: String(timeoutMs) },
  });
  try {
    const a = await callSubscriber(stack, stack.hookUrl('/ok-a'));
    const b = await callSubscriber(stack, stack.hookUrl('/ok-b'));
    const stuck = await request(stack.servers.ctx.app)
      .post('/api/v1/webhooks')
      .set('Authorization', a.tenant.auth)
      .send({ url: stack.hookUrl('/stuck'), events: ['call.started'] });
    if (stuck.status !== 201) throw new Error(`subscription refused: ${stuck.status}`);
    const outcomes: Outcome[] = [];
    const started = Date.now();
    await pool(events * 2, 8, async (i) => {
      const due = started + (i * spreadMs) / (events * 2);
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      outcomes.push(await stack.ingest((i % 2 ? b : a).receptionistId, i % 2 ? 'b' : 'a'));
    });
    const knex = stack.servers.ctx.deps.knex;
    const problems: string[] = [];
    const lag: number[] = [];
    const accounts: Record<string, { acked: number; delivered: number }> = {};
    for (const [lane, routePath] of [
      ['a', '/ok-a'],
      ['b', '/ok-b'],
    ] as const) {
      const mine = outcomes.filter((o) => o.lane === lane);
      const acked = ackedRefs(mine);
      const account = await awaitDelivery({
        knex,
        acked,
        requests: stack.receiver.requests,
        routePath,
        timeoutMs: 60_000,
        log,
      });
      problems.push(...accountProblems(account).map((p) => `${routePath}: ${p}`));
      accounts[routePath] = {
        acked: account.acked,
        delivered: account.acked - account.undelivered.length - account.uncommitted.length,
      };
      const eventOf = await eventsOfMessages(knex, acked);
      for (const o of mine) {
        const at = arrived.get(eventOf.get(o.ref as string) ?? '');
        if (o.status === 202 && at) lag.push(at - (o.at + o.ms));
      }
    }
    const elapsed = Date.now() - started;
    const refused = outcomes.filter((o) => o.status !== 202);
    if (refused.length) problems.push(`ingestion answered ${tally(refused)} (all 202 expected)`);
    const slowest = Math.max(0, ...lag);
    if (slowest >= timeoutMs)
      problems.push(
        `a healthy endpoint waited ${slowest} ms, as long as a dead endpoint's attempt`,
      );
    if (maxOpen > PER_SUBSCRIPTION)
      problems.push(
        `the dead endpoint had ${maxOpen} attempts open, over its cap ${PER_SUBSCRIPTION}`,
      );
    const stuckRows = (await knex('webhook_deliveries')
      .where({ subscription_id: stuck.body.id as string })
      .select('status')) as Array<{ status: string }>;
    const ackedA = accounts['/ok-a']?.acked ?? 0;
    if (stuckRows.length !== ackedA)
      problems.push(`${stuckRows.length} deliveries to the dead endpoint for ${ackedA} events`);
    if (stuckRows.some((r) => r.status === 'succeeded'))
      problems.push('a delivery to the dead endpoint is marked succeeded');
    const statuses = new Map<string, number>();
    for (const r of stuckRows) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    return {
      figures: [
        ['events acked (202)', `${outcomes.length - refused.length} (${events} per tenant)`],
        [
          'tenant A, healthy endpoint: acked / delivered',
          `${accounts['/ok-a']?.acked} / ${accounts['/ok-a']?.delivered}`,
        ],
        [
          'tenant B, healthy endpoint: acked / delivered',
          `${accounts['/ok-b']?.acked} / ${accounts['/ok-b']?.delivered}`,
        ],
        [
          '202 → healthy delivery p50 / p99 / max',
          `${percentile(lag, 50)} / ${percentile(lag, 99)} / ${slowest} ms`,
        ],
        ['dead endpoint: attempt timeout', `${timeoutMs} ms`],
        [
          'dead endpoint: requests received (none answered)',
          stack.receiver.requests.filter((r) => r.path === '/stuck').length,
        ],
        [
          'dead endpoint: most attempts open at once',
          `${maxOpen} (cap ${PER_SUBSCRIPTION} of ${CONCURRENCY} worker slots)`,
        ],
        [
          'dead endpoint: deliveries by status',
          [...statuses].map(([s, n]) => `${s}×${n}`).join(' '),
        ],
        ['duration', secs(elapsed)],
      ],
      problems,
    };
  } finally {
    for (const res of open) res.destroy();
    await stack.destroy();
  }
}

export const stuckReceiverPart: ChaosPart = {
  description: 'a receiver that never answers holds only its own deliveries',
  run: ({ log }) =>
    runStuckReceiver({
      events: intEnv('CHAOS_EVENTS_PER_TENANT', 500),
      spreadMs: 30_000,
      timeoutMs: 10_000,
      log,
    }),
};
