import type { AddressInfo } from 'node:net';
import { loadConfig } from '@switchboard/config';
import { createApi, createDeps } from '../../apps/api/src/app';

/**
 * The OpenAPI document exactly as the API serves it: createApi on an ephemeral port of
 * 127.0.0.1, then GET /api/v1/openapi.json. Building the app opens no database connection
 * (knex is lazy), so this runs without Postgres; Redis is used when it answers, never needed.
 */
export async function servedOpenApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({
    INGEST_TOKEN: 'document-only-0123456789',
    CURSOR_SECRET: 'document-only-0123456789',
    SECRET_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'),
    LOG_LEVEL: 'silent',
  });
  const deps = createDeps(config);
  const server = createApi(deps).app.listen(0, '127.0.0.1');
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve).once('error', reject);
    });
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`);
    if (!res.ok) throw new Error(`GET /api/v1/openapi.json answered ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    // BullMQ's producers finish connecting first (or fail to): closing them half-way through
    // their start-up makes BullMQ emit an error nobody listens to any more.
    const { deliveries, outboundCalls } = deps.queues;
    const ready = Promise.allSettled([deliveries, outboundCalls].map((q) => q.waitUntilReady()));
    // Without a Redis to connect to they would wait forever: give them a moment, no more.
    await Promise.race([ready, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    await deps.close();
  }
}
