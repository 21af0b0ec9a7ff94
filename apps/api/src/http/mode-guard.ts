import { liveModeOnly, notFound } from '../errors';
import type { RouteDef } from '../openapi/route';
import type { Step } from './step';

/**
 * The tags whose operations test mode does not cover (docs/API.md, Test mode): they act on
 * the account's live data for an agent (MCP), reach a real provider (receptionists'
 * numbers), or grant live access (portal links). A test-mode key gets 403 `live_mode_only`
 * there, before anything is read or made; reading receptionists stays open (test calls and
 * texts need them). SMS, leads and campaigns have a mode (decision 0117).
 */
const LIVE_ONLY_TAGS: ReadonlySet<string> = new Set(['MCP', 'Portal']);

/** Whether a test-mode key is refused on `route`. */
export const isLiveOnly = (route: Pick<RouteDef, 'tag' | 'method'>): boolean =>
  LIVE_ONLY_TAGS.has(route.tag) || (route.tag === 'Receptionists' && route.method !== 'get');

/** Refuses a test-mode key (after authentication: `req.auth` is set). */
export const liveOnly: Step = async (req) => {
  if (req.auth && !req.auth.livemode) throw liveModeOnly();
};

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
