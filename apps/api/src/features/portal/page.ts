import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import express, { type Express, type Response } from 'express';
import type { Deps } from '../../deps';

/**
 * The portal's static build (`npm run portal:build` writes apps/portal/dist). This file runs
 * from its source (apps/api/src/features/portal) in tests and bundled into
 * apps/api/dist/server.js by `npm run build`: both find the same apps folder.
 */
const APPS = resolve(__dirname, basename(__dirname) === 'dist' ? '../..' : '../../../..');
export const PORTAL_DIST = join(APPS, 'portal', 'dist');

const TENANT = /^ten_[A-Za-z0-9]{1,64}$/;

/**
 * Everything the page loads comes from this origin: no inline script or style, no CDN.
 * `frame-ancestors` is the tenant's allow-list (set with the operator CLI), `'none'` unless
 * the URL names a tenant that has one.
 */
export const portalCsp = (frameAncestors: readonly string[]): string =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors.length ? frameAncestors.join(' ') : "'none'"}`,
  ].join('; ');

const secure = (res: Response, csp: string, framed: boolean): void => {
  res.set({
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
  });
  if (!framed) res.set('X-Frame-Options', 'DENY');
};

/**
 * Serves the tenant portal at /portal (docs/API.md, Tenant portal). The page itself holds
 * no data and needs no key: it trades the one-use code of its link (in the URL fragment,
 * which no server sees) for a portal token. `?tenant=ten_…` picks that tenant's
 * `frame-ancestors`, for a page embedded in the tenant's own site.
 */
export function mountPortalPage(app: Express, deps: Deps): void {
  let html: string | undefined;
  const page = (): string | undefined =>
    (html ??= existsSync(join(PORTAL_DIST, 'index.html'))
      ? readFileSync(join(PORTAL_DIST, 'index.html'), 'utf8')
      : undefined);

  app.use(
    '/portal/assets',
    express.static(join(PORTAL_DIST, 'assets'), {
      immutable: true,
      maxAge: '1y',
      index: false,
      fallthrough: false,
      setHeaders: (res) => secure(res as unknown as Response, portalCsp([]), false),
    }),
  );
  app.get(
    ['/portal', '/portal/'],
    deps.lifecycle.tracked(async (req, res) => {
      const tenantId = typeof req.query.tenant === 'string' ? req.query.tenant : '';
      const tenant = TENANT.test(tenantId) ? await deps.stores.tenants.get(tenantId) : undefined;
      const origins = tenant?.portalOrigins ?? [];
      secure(res, portalCsp(origins), origins.length > 0);
      res.set('Cache-Control', 'no-store');
      const body = page();
      if (!body) {
        res
          .status(503)
          .type('text/plain')
          .send('The portal is not built: run npm run portal:build');
        return;
      }
      res.type('html').send(body);
    }),
  );
}
