import { createTestContext, type TestContext } from './context';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres';
import { startPrivateRedis, type PrivateRedis } from './private-redis';

/**
 * A private Postgres cluster and a private redis-server (both on free loopback ports, see
 * private-postgres.ts and private-redis.ts) with a migrated database and a test context on
 * them: what a fault scenario stops, starts and freezes without touching the shared servers.
 * `ctx.config` is what API and worker processes are started with; `ctx.deps` reads and
 * writes the same database from the scenario itself.
 */
export interface PrivateServers {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  ctx: TestContext;
  /** Closes the context, then stops both servers and deletes their files. */
  destroy(): Promise<void>;
}

export async function startPrivateServers(
  env: Record<string, string> = {},
): Promise<PrivateServers> {
  const [pg, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
  try {
    const url = await pg.createMigratedDatabase('switchboard');
    const ctx = await createTestContext({ DATABASE_URL: url, REDIS_URL: redis.url, ...env });
    return {
      pg,
      redis,
      ctx,
      async destroy() {
        redis.thaw();
        await ctx.close().catch(() => undefined);
        await Promise.allSettled([pg.destroy(), redis.stop()]);
      },
    };
  } catch (err) {
    await Promise.allSettled([pg.destroy(), redis.stop()]);
    throw err;
  }
}
