import type { PortalSession, PortalSessionCreate, PortalToken } from '../types';
import { Resource, segment } from './resource';

/** Links to the tenant portal (admin scope), and the code exchange its page makes. */
export class PortalResource extends Resource {
  /** A link with a one-use code (`url`); hand it to the tenant's team. Not retried. */
  createSession(body: PortalSessionCreate = {}): Promise<PortalSession> {
    return this.invoke('POST', '/portal/sessions', { body, idempotent: false });
  }

  /** Revokes a session: its link and token stop working from the next request. */
  revokeSession(id: string): Promise<void> {
    return this.invoke('DELETE', `/portal/sessions/${segment(id)}`, { idempotent: true });
  }

  /** Trades a link's one-use code for a portal token (what the page does). Not retried. */
  exchange(code: string): Promise<PortalToken> {
    return this.invoke('POST', '/portal/exchange', { body: { code }, idempotent: false });
  }
}
