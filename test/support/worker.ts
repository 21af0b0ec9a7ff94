import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Knex } from '@switchboard/db';
import { emit } from '@switchboard/events';
import { createLogger, type Logger } from '@switchboard/logger';
import { createWorkerDeps, type WorkerDeps } from '../../apps/worker/src/deps';
import { startRunner, type Runner, type RunnerOptions } from '../../apps/worker/src/runner';
import type { TestContext } from './context';
import { receptionistTenant } from './receptionist';

export { waitFor } from './wait';

export interface TestWorker {
  deps: WorkerDeps;
  runner: Runner;
  close(): Promise<void>;
}

/**
 * The real worker (relay, fan-out, delivery, reconciler) in this process, on the test
 * file's database and Redis prefix. Timings are shortened so recovery paths run in seconds.
 * `TEST_WORKER_LOG_LEVEL` (e.g. `warn`) prints the worker's log; silent by default, unless
 * `opts.logger` is given.
 */
export async function startTestWorker(
  ctx: TestContext,
  opts: {
    webhookCa?: string;
    runner?: RunnerOptions;
    config?: TestContext['config'];
    /** The worker's logger, for a test that reads its lines. */
    logger?: Logger;
  } = {},
): Promise<TestWorker> {
  const deps = createWorkerDeps(opts.config ?? ctx.config, {
    // TEST_WORKER_LOG_LEVEL=warn shows the worker's own log when a test needs explaining.
    logger: opts.logger ?? createLogger('worker', process.env.TEST_WORKER_LOG_LEVEL ?? 'silent'),
    webhookCa: opts.webhookCa,
  });
  const runner = await startRunner(deps, {
    metricsPort: null,
    reconcileIntervalMs: 250,
    reconcileGraceMs: 1500,
    lockDurationMs: 5000,
    stalledIntervalMs: 1000,
    ...opts.runner,
  });
  return {
    deps,
    runner,
    async close() {
      await runner.close(5000);
      await deps.close();
    },
  };
}

/** The data of a new inbound call's `call.started` (a fresh call id, started now). */
export const callStartedData = () => ({
  call_id: `call_${randomBytes(8).toString('hex')}`,
  direction: 'inbound' as const,
  from: '+14155550100',
  to: '+14155550199',
  started_at: new Date().toISOString(),
});

/** A committed `call.started` for the receptionist (what ingestion would emit). */
export function emitCallStarted(
  ctx: TestContext,
  tenantId: string,
  receptionistId: string,
  trx: Knex = ctx.deps.knex,
): Promise<string> {
  const write = (t: Knex) =>
    emit(t, {
      tenantId,
      receptionistId,
      type: 'call.started',
      data: callStartedData(),
    });
  return trx.isTransaction ? write(trx) : trx.transaction(write);
}

/** A tenant with an admin key, one ready receptionist, and a subscription to `url`. */
export async function subscriber(ctx: TestContext, url: string, events?: string[]) {
  const { rcp: receptionist, ...tenant } = await receptionistTenant(ctx, {
    phoneNumber: '+14155550199',
  });
  const res = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', tenant.auth)
    .send({ url, ...(events ? { events } : {}) });
  if (res.status !== 201)
    throw new Error(`subscription refused: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    tenant,
    receptionistId: receptionist,
    subscription: res.body as { id: string; signing_secret: string },
  };
}
