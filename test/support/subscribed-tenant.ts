import request from 'supertest';
import type {
  TestCertificate,
  TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import type { RunnerOptions } from '../../apps/worker/src/runner';
import { createTestContext, type TestContext } from './context';
import { receptionistTenant } from './receptionist';
import { startHttpsReceiver } from './webhook-world';
import { startTestWorker, type TestWorker } from './worker';

/**
 * The world of the worker's end-to-end tests: a test context, a tenant with an admin key, a
 * `ready` receptionist on `phoneNumber`, and one webhook subscription (to `events`, or to
 * every event) on an HTTPS receiver on 127.0.0.1 that answers 204 at `/hooks`. No worker
 * runs until the test starts one (`startWorker`, trusting the receiver), so it can set up
 * what a worker must find waiting first.
 */
export interface SubscribedTenant {
  ctx: TestContext;
  receiver: TestReceiver;
  cert: TestCertificate;
  auth: string;
  tenantId: string;
  rcp: string;
  /** The subscription's signing secret. */
  secret: string;
  /** Starts an in-process worker that trusts the receiver (call again for a second one). */
  startWorker(runner?: RunnerOptions): Promise<TestWorker>;
  /** Stops every worker started here, then the context and the receiver. */
  close(): Promise<void>;
}

export async function subscribedTenant(opts: {
  env?: Record<string, string>;
  phoneNumber: string;
  events?: string[];
}): Promise<SubscribedTenant> {
  const { cert, receiver, base } = await startHttpsReceiver({
    '/hooks': (_q, res) => res.writeHead(204).end(),
  });
  const ctx = await createTestContext(opts.env).catch(async (err: unknown) => {
    await receiver.close();
    throw err;
  });
  const workers: TestWorker[] = [];
  const close = async () => {
    await Promise.all(workers.map((w) => w.close()));
    await ctx.close();
    await receiver.close();
  };
  const { auth, tenantId, rcp } = await receptionistTenant(ctx, { phoneNumber: opts.phoneNumber });
  const sub = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({
      url: `${base}/hooks`,
      ...(opts.events ? { events: opts.events } : {}),
    });
  if (sub.status !== 201) {
    await close();
    throw new Error(`could not subscribe: ${sub.status} ${sub.text}`);
  }
  return {
    ctx,
    receiver,
    cert,
    auth,
    tenantId,
    rcp,
    secret: sub.body.signing_secret,
    async startWorker(runner) {
      const worker = await startTestWorker(ctx, { webhookCa: cert.cert, runner });
      workers.push(worker);
      return worker;
    },
    close,
  };
}
