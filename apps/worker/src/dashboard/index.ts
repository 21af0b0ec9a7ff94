import type { RequestListener } from 'node:http';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import express from 'express';
import type { Config } from '@switchboard/config';
import {
  catalog,
  closeQueues,
  createQueues,
  createRedis,
  type CatalogKey,
} from '@switchboard/queues';
import { requireDashboardToken } from './auth';

/** Where the dashboard lives on the worker's metrics port. */
export const DASHBOARD_PATH = '/admin/queues';

export interface QueueDashboard {
  /** Serves DASHBOARD_PATH (behind the token) and 404 for anything else. */
  handle: RequestListener;
  close(): Promise<void>;
}

/**
 * The operator's view of the queues (bull-board), every queue of the job catalog, read-only.
 * Jobs are hints and rows are the truth, so there is nothing an operator should change by
 * hand in a queue (a removed job comes back from its reconciler; a promoted retry would skip
 * its backoff); read-only also leaves nothing for a forged cross-site request to do. It has
 * a fail-fast connection of its own: a page view during a Redis outage fails at once instead
 * of queueing behind the worker's blocking connection.
 */
export function createQueueDashboard(
  config: Pick<Config, 'redis' | 'queuePrefix'>,
  token: string,
): QueueDashboard {
  const redis = createRedis(config.redis, 'producer');
  const queues = createQueues(redis, config.queuePrefix);
  const serverAdapter = new ExpressAdapter().setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: (Object.keys(catalog) as CatalogKey[]).map(
      (key) => new BullMQAdapter(queues[key] as unknown as Queue, { readOnlyMode: true }),
    ),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Switchboard queues', hideDocsLink: true } },
  });
  const app = express();
  app.disable('x-powered-by');
  app.use(DASHBOARD_PATH, requireDashboardToken(token), serverAdapter.getRouter());
  app.use((_req, res) => {
    res.status(404).end();
  });
  return {
    handle: app,
    close: () => closeQueues(queues, redis),
  };
}
