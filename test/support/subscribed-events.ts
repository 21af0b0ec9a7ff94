import { randomUUID } from 'node:crypto';
import type { Knex } from '@switchboard/db';
import { emitMany } from '@switchboard/events';
import type { TestContext } from './context';

/**
 * A new tenant with `count` subscriptions to every event type, straight through the store
 * (no API, no receiver: the targets are never called), for tests of the delivery tables.
 */
export async function tenantWithSubscriptions(
  ctx: TestContext,
  count = 1,
): Promise<{ tenantId: string; subscriptionIds: string[] }> {
  const { tenantId } = await ctx.tenant(['admin']);
  const subscriptionIds: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const created = await ctx.deps.stores.webhookSubscriptions.createWithinLimit(
      {
        id: randomUUID(),
        tenantId,
        url: `https://127.0.0.1:9/hooks/${i}`,
        events: [],
        description: null,
        secret: { ciphertext: 'x', keyId: 'k' },
      },
      Math.max(count, 100),
    );
    if (created.kind !== 'created') throw new Error(`subscription ${i} not created`);
    subscriptionIds.push(created.subscription.id);
  }
  return { tenantId, subscriptionIds };
}

/** `count` usage.threshold events of `tenantId`, committed in one transaction; their ids. */
export function emitUsageEvents(knex: Knex, tenantId: string, count = 1): Promise<string[]> {
  return knex.transaction((trx) =>
    emitMany(
      trx,
      Array.from({ length: count }, (_, i) => ({
        tenantId,
        type: 'usage.threshold' as const,
        data: {
          threshold: 80,
          minutes_used: i,
          minutes_included: 100,
          billing_period_end: '2026-12-01T00:00:00.000Z',
        },
      })),
    ),
  );
}
