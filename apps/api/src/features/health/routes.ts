import type { Express } from 'express';
import { probeRedis, REQUEST_REDIS_TIMEOUT_MS, withinMs } from '@switchboard/queues';
import type { Deps } from '../../deps';
import { serviceUnavailable } from '../../errors';

/** Unauthenticated probes: /healthz says the process is up, /readyz that its backends answer. */
export function mountHealth(app: Express, deps: Deps): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get(
    '/readyz',
    deps.lifecycle.tracked(async (_req, res) => {
      // A stopping process must leave the load balancer's rotation before it stops accepting.
      if (deps.lifecycle.isStopping) throw serviceUnavailable('Not ready: stopping');
      const [pg, redis] = await Promise.allSettled([
        withinMs(1500, deps.knex.raw('select 1'), 'postgres probe'),
        withinMs(
          REQUEST_REDIS_TIMEOUT_MS,
          probeRedis(deps.redis, deps.config.queuePrefix),
          'redis probe',
        ),
      ]);
      const failed = [
        pg.status === 'rejected' && 'postgres',
        redis.status === 'rejected' && 'redis',
      ]
        .filter(Boolean)
        .join(' and ');
      if (failed) throw serviceUnavailable(`Not ready: ${failed} did not answer`);
      res.json({ status: 'ready', postgres: 'ok', redis: 'ok' });
    }),
  );
}
