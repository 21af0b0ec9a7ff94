import {
  generateCertificate,
  startReceiver,
  type Handler,
  type TestCertificate,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { createTestContext, type TestContext } from './context';
import { startTestWorker, type TestWorker } from './worker';
import type { RunnerOptions } from '../../apps/worker/src/runner';

/** An HTTPS receiver on 127.0.0.1 with a throwaway certificate, and its base URL. */
export interface HttpsReceiver {
  cert: TestCertificate;
  receiver: TestReceiver;
  /** `https://127.0.0.1:<port>`: a route's URL is `${base}/route`. */
  base: string;
}

/** Starts a receiver routing by path to `routes` (404 otherwise); its certificate names 127.0.0.1 and localhost. */
export async function startHttpsReceiver(
  routes: Readonly<Record<string, Handler>>,
): Promise<HttpsReceiver> {
  const cert = generateCertificate('IP:127.0.0.1,DNS:localhost');
  const receiver = await startReceiver(cert, routes);
  return { cert, receiver, base: `https://127.0.0.1:${receiver.port}` };
}

/**
 * The world of the webhook worker tests: an HTTPS receiver (see `startHttpsReceiver`), a
 * test context configured by `env`, and the real worker in this process, trusting the
 * receiver's certificate. `close()` stops all three (the worker before the database goes).
 */
export interface WebhookWorld extends HttpsReceiver {
  ctx: TestContext;
  worker: TestWorker;
  close(): Promise<void>;
}

export async function startWebhookWorld(
  routes: Readonly<Record<string, Handler>>,
  opts: { env?: Record<string, string>; runner?: RunnerOptions } = {},
): Promise<WebhookWorld> {
  const https = await startHttpsReceiver(routes);
  let ctx: TestContext | undefined;
  try {
    ctx = await createTestContext(opts.env);
    const worker = await startTestWorker(ctx, { webhookCa: https.cert.cert, runner: opts.runner });
    const world = ctx;
    return {
      ...https,
      ctx: world,
      worker,
      async close() {
        // The receiver goes with the worker: a delivery still in flight fails at once
        // instead of holding the worker's shutdown.
        await Promise.all([worker.close(), https.receiver.close()]);
        await world.close();
      },
    };
  } catch (err) {
    await ctx?.close();
    await https.receiver.close();
    throw err;
  }
}
