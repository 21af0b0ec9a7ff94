import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiFailure, clearSession, exchange, loadSession, saveSession } from './api';
import type { PortalToken } from './api';
import { CatalogPage } from './catalog';
import { EndpointPage } from './endpoint';
import { EndpointsPage, NewEndpointPage } from './endpoints';
import { EventPage } from './event';
import type { Can } from './page-props';
import { FatalPage, fatalOfCode, NotFound, type Fatal } from './states';

/**
 * Routes are in the fragment (`#/`, `#/new`, `#/events`, `#/endpoints/<id>`, and an event of
 * an endpoint's log, `#/endpoints/<id>/events/<event id>`): the server sees only /portal.
 */
type Route =
  | { page: 'list' }
  | { page: 'new' }
  | { page: 'events' }
  | { page: 'endpoint'; id: string }
  | { page: 'event'; endpointId: string; id: string }
  | null;

const parse = (hash: string): Route => {
  const path = hash.replace(/^#/, '') || '/';
  if (path === '/') return { page: 'list' };
  if (path === '/new') return { page: 'new' };
  if (path === '/events') return { page: 'events' };
  const event = /^\/endpoints\/([^/]+)\/events\/([^/]+)$/.exec(path);
  if (event?.[1] && event[2]) {
    return {
      page: 'event',
      endpointId: decodeURIComponent(event[1]),
      id: decodeURIComponent(event[2]),
    };
  }
  const m = /^\/endpoints\/([^/]+)$/.exec(path);
  return m?.[1] ? { page: 'endpoint', id: decodeURIComponent(m[1]) } : null;
};

/**
 * The portal: trades the link's one-use code once (the fragment never reaches a server log),
 * keeps the token for this tab only, and turns any 401 into the "expired" page: an action
 * on a page left open past its expiry changes nothing and says so.
 */
export function App() {
  const [session, setSession] = useState<PortalToken | null>(null);
  const [fatal, setFatal] = useState<Fatal | null>(null);
  const [route, setRoute] = useState<Route>(parse(location.hash));

  useEffect(() => {
    const onHash = () => setRoute(parse(location.hash));
    window.addEventListener('hashchange', onHash);
    const code = /^#code=(.+)$/.exec(location.hash)?.[1];
    if (code) {
      history.replaceState(null, '', `${location.pathname}${location.search}#/`);
      setRoute({ page: 'list' });
      clearSession();
      exchange(decodeURIComponent(code)).then(
        (s) => {
          saveSession(s);
          setSession(s);
        },
        (err: unknown) =>
          setFatal(err instanceof ApiFailure ? fatalOfCode(err.message) : 'invalid'),
      );
    } else {
      const saved = loadSession();
      if (!saved) setFatal('nolink');
      else if (Date.parse(saved.expires_at) <= Date.now()) setFatal('expired');
      else setSession(saved);
    }
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const client = useMemo(() => (session ? api(session.token) : null), [session]);
  if (fatal) return <FatalPage reason={fatal} />;
  if (!session || !client) {
    return (
      <main class="page narrow" id="main" aria-busy="true">
        <p>Opening your portal…</p>
      </main>
    );
  }
  const can: Can = {
    manage: session.capabilities.includes('manage_endpoints'),
    secrets: session.capabilities.includes('manage_secrets'),
    recover: session.capabilities.includes('recover'),
  };
  /** Every failed call comes here first: 401 means the session ended. */
  const onFailure = (err: unknown): boolean => {
    if (err instanceof ApiFailure && err.status === 401) {
      clearSession();
      setFatal('expired');
      return true;
    }
    return false;
  };
  const props = { client, can, onFailure };
  return (
    <div class="page">
      <header class="top">
        <p class="brand">
          <span class="tenant">{session.tenant_name}</span>
          <span class="sub">Webhooks portal</span>
        </p>
        <nav aria-label="Portal">
          <a href="#/">Endpoints</a> <a href="#/events">Event catalog</a>
        </nav>
      </header>
      <main id="main">
        {route?.page === 'list' && <EndpointsPage {...props} />}
        {route?.page === 'new' && <NewEndpointPage {...props} />}
        {route?.page === 'events' && <CatalogPage {...props} />}
        {route?.page === 'endpoint' && <EndpointPage key={route.id} id={route.id} {...props} />}
        {route?.page === 'event' && (
          <EventPage key={route.id} id={route.id} endpointId={route.endpointId} {...props} />
        )}
        {!route && <NotFound what="Page" />}
      </main>
      <footer class="foot">
        <p>
          {can.manage ? 'You can view and change endpoints.' : 'You can view endpoints.'} This link
          works until {new Date(session.expires_at).toLocaleString()}.
        </p>
      </footer>
    </div>
  );
}
