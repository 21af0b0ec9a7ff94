import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  generateCertificate,
  startReceiver,
  type Handler,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { startApiProcess, type ApiProcess } from '../../test/support/api-process';
import { messages, uid } from '../../test/support/fixtures';
import type { TestContext } from '../../test/support/context';
import { startPrivateServers, type PrivateServers } from '../../test/support/private-servers';
import { subscriber } from '../../test/support/worker';
import { startWorkerProcess, type WorkerProcess } from '../../test/support/worker-process';
import { send, type Outcome } from './client';

/** What a stack's processes run on: a test context on some Postgres and Redis. */
export interface Backends {
  ctx: TestContext;
  destroy(): Promise<void>;
}

/**
 * One scenario's world: private Postgres and Redis (test/support/private-servers.ts) unless
 * the scenario brings its own servers, an HTTPS receiver on 127.0.0.1 whose CA the worker
 * trusts, and the API and the worker as real processes on those servers. Everything is torn
 * down by `destroy()`.
 */
export interface Stack<S extends Backends = PrivateServers> {
  servers: S;
  receiver: TestReceiver;
  /** `https://127.0.0.1:PORT` + path: a webhook URL on the receiver. */
  hookUrl(routePath: string): string;
  api: ApiProcess;
  /** The running worker process (replaced by `restartWorker`). */
  worker: WorkerProcess;
  /** Starts another worker process (a second replica, or the one after a crash). */
  startWorker(): Promise<WorkerProcess>;
  /** Starts another API process on the same servers (a rolling deploy's next replica). */
  startApi(): Promise<ApiProcess>;
  /**
   * Posts one `call.started` for `receptionistId` to ingestion on `baseUrl` (default: the
   * stack's API); the outcome's `ref` is the message id.
   */
  ingest(receptionistId: string, lane?: string, baseUrl?: string): Promise<Outcome>;
  destroy(): Promise<void>;
}

export interface StackOptions<S extends Backends = PrivateServers> {
  routes: Readonly<Record<string, Handler>>;
  /** Starts the servers (default: startPrivateServers). */
  servers?: () => Promise<S>;
  /** Variables for the worker processes over the test environment. */
  workerEnv?: Record<string, string>;
  apiEnv?: Record<string, string>;
}

/**
 * Whether the processes run the compiled entries (`apps/api/dist`, `apps/worker/dist`, as deployed; `npm run chaos`
 * builds them first) or the TypeScript sources through tsx (the jest versions of the parts,
 * which must not depend on a build being current). Same code, same timings: the compiled
 * worker starts in a fraction of the time, which is part of every figure after a kill.
 */
let builtServices = false;
export function useBuiltServices(): void {
  builtServices = true;
}

export async function startStack<S extends Backends = PrivateServers>(
  opts: StackOptions<S>,
): Promise<Stack<S>> {
  const cert = generateCertificate('IP:127.0.0.1,DNS:localhost');
  const certDir = mkdtempSync(path.join(tmpdir(), 'sb-chaos-'));
  const caFile = path.join(certDir, 'ca.pem');
  writeFileSync(caFile, cert.cert);
  const cleanups: Array<() => Promise<unknown>> = [
    async () => rmSync(certDir, { recursive: true, force: true }),
  ];
  const destroy = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const receiver = await startReceiver(cert, opts.routes);
    cleanups.push(() => receiver.close());
    // Without `servers`, S is its default, PrivateServers.
    const servers = await (opts.servers?.() ??
      (startPrivateServers() as Promise<Backends> as Promise<S>));
    cleanups.push(() => servers.destroy());
    const { config } = servers.ctx;
    const workerEnv = { NODE_EXTRA_CA_CERTS: caFile, ...opts.workerEnv };
    const workers: WorkerProcess[] = [];
    const apis: ApiProcess[] = [];
    cleanups.push(() => Promise.all(workers.map((w) => w.kill())));
    cleanups.push(() => Promise.all(apis.map((a) => a.stop())));
    const startWorker = async () => {
      // The production entry and timings (apps/worker/src/main.ts): what the figures
      // describe is the worker that is deployed.
      const w = await startWorkerProcess(config, workerEnv, {
        entry: builtServices ? 'built' : 'production',
      });
      workers.push(w);
      return w;
    };
    const startApi = async () => {
      const a = await startApiProcess(config, {
        env: { LOG_LEVEL: process.env.CHAOS_API_LOG_LEVEL ?? 'silent', ...opts.apiEnv },
        built: builtServices,
      });
      apis.push(a);
      return a;
    };
    const [api, worker] = await Promise.all([startApi(), startWorker()]);
    const stack: Stack<S> = {
      servers,
      receiver,
      hookUrl: (routePath) => `https://127.0.0.1:${receiver.port}${routePath}`,
      api,
      worker,
      startWorker,
      startApi,
      ingest(receptionistId, lane = 'ingest', baseUrl = stack.api.baseUrl) {
        const message = messages.started(receptionistId, `CA${uid()}`, new Date().toISOString());
        return send(`${baseUrl}/internal/v1/telephony/events`, {
          lane,
          headers: { authorization: `Bearer ${config.ingestToken}` },
          body: message,
          ref: message.id,
        });
      },
      destroy,
    };
    return stack;
  } catch (err) {
    await destroy();
    throw err;
  }
}

/** A tenant with one ready receptionist and a `call.started` subscription to `url`. */
export async function callSubscriber(stack: Stack<Backends>, url: string) {
  return subscriber(stack.servers.ctx, url, ['call.started']);
}
