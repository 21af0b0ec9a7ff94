import { notFound } from '../errors';
import type { Step } from './step';

/**
 * Keeps a key to the webhook subscriptions of its mode (docs/API.md, Test mode): on a route
 * naming a subscription in its path, a subscription of the other mode is a 404, as another
 * tenant's is. A subscription the tenant does not have at all is left to the route (its own
 * 404). One primary-key read: these are management routes, not the hot path.
 */
export function subscriptionModeGuard(
  modeOf: (tenantId: string, id: string) => Promise<boolean | undefined>,
): Step {
  return async (req) => {
    const id = String(req.valid.params.id).toLowerCase();
    const livemode = await modeOf(req.auth.tenantId, id);
    if (livemode !== undefined && livemode !== req.auth.livemode) {
      throw notFound('webhook subscription', 'id');
    }
  };
}
