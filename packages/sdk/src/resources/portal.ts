import type { PageIterator } from '../pagination';
import type {
  ListParams,
  LivePortalSession,
  PortalSession,
  PortalSessionCreate,
  PortalSessionsRevoked,
  PortalToken,
} from '../types';
import { Resource, segment } from './resource';

/** Links to the tenant portal (admin scope), and the code exchange its page makes. */
export class PortalResource extends Resource {
  /** A link with a one-use code (`url`); hand it to the tenant's team. Not retried. */
  createSession(body: PortalSessionCreate = {}): Promise<PortalSession> {
    return this.invoke('POST', '/portal/sessions', { body, idempotent: false });
  }

  /** The live sessions (never a code or token), newest first; each ends with its creator key. */
  listSessions(params: ListParams<'listPortalSessions'> = {}): PageIterator<LivePortalSession> {
    return this.paginateData<LivePortalSession>('/portal/sessions', params);
  }

  /** Revokes every session of the tenant at once; answers how many were live. */
  revokeAllSessions(): Promise<PortalSessionsRevoked> {
    return this.invoke('DELETE', '/portal/sessions', { idempotent: true });
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
