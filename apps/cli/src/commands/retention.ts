import { MAX_CALLS_RETENTION_DAYS, MAX_DELIVERY_RETENTION_DAYS } from '@switchboard/db';
import { parseOptions, required, UsageError } from '../args';
import type { CliContext } from '../context';

/** `N` days from 1 to `max`, or `reset` (the default: null). */
function days(raw: string | undefined, flag: string, max: number, reset: string) {
  if (raw === undefined) return undefined;
  if (raw === reset) return null;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new UsageError(`--${flag} must be an integer from 1 to ${max}, or ${reset}`);
  }
  return n;
}

/**
 * Sets a tenant's retention: `--calls-days N` deletes its calls and SMS older than N days
 * (`forever`, the default, keeps them), `--delivery-days N` keeps its webhook delivery
 * history N days instead of the deployment's DELIVERY_RETENTION_DAYS (`default`). The
 * worker's maintenance job applies it on its next run. Without either, prints the current.
 */
export async function tenantRetention(ctx: CliContext, argv: string[]): Promise<object> {
  const o = parseOptions(argv, ['id', 'calls-days', 'delivery-days']);
  const id = required(o, 'id');
  const callsDays = days(o['calls-days'], 'calls-days', MAX_CALLS_RETENTION_DAYS, 'forever');
  const deliveryDays = days(
    o['delivery-days'],
    'delivery-days',
    MAX_DELIVERY_RETENTION_DAYS,
    'default',
  );
  const r = await ctx.stores.tenantRetention.set(id, { callsDays, deliveryDays });
  if (!r) throw new UsageError(`no tenant ${id}`);
  return {
    tenant_id: r.tenantId,
    calls_days: r.callsDays,
    delivery_days: r.deliveryDays,
  };
}
