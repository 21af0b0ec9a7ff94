import { readFileSync } from 'node:fs';
import type { Express, Request, Response } from 'express';

/**
 * The API reference page: Redoc, served from this process's own node_modules (no CDN), over
 * the served OpenAPI document. URLs in the page are relative, so it works under /api/v1, under
 * /v1 and behind a proxy that adds its own prefix.
 */
const REDOC_BUNDLE = require.resolve('redoc/bundles/redoc.standalone.js');

/**
 * Redoc's side menu shows Redocly's logo from Redocly's CDN, unconditionally. The page must
 * not reach out to anyone, so that one URL becomes an empty image, which Redoc then hides
 * (its own onError). The CSP below would block the request anyway; this avoids even trying.
 */
const REDOC_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
let bundle: Buffer | undefined;
const redocBundle = (): Buffer =>
  (bundle ??= Buffer.from(
    readFileSync(REDOC_BUNDLE, 'utf8').replaceAll(REDOC_LOGO_URL, 'data:,'),
    'utf8',
  ));

/** Everything the page needs comes from this origin; styled-components needs inline styles. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Switchboard API reference</title>
    <link rel="icon" href="data:,">
  </head>
  <body>
    <redoc spec-url="openapi.json" required-props-first="true"
      expand-responses="200,201,202,204" json-sample-expand-level="3"></redoc>
    <script src="docs/redoc.standalone.js"></script>
  </body>
</html>
`;

function page(req: Request, res: Response): void {
  // `docs/` would make the relative URLs resolve below it: send the canonical URL instead.
  if (req.path.endsWith('/')) {
    const at = req.originalUrl.indexOf('?');
    const query = at < 0 ? '' : req.originalUrl.slice(at);
    res.redirect(301, `${req.baseUrl}${req.path.replace(/\/+$/, '')}${query}`);
    return;
  }
  res.set({ 'Content-Security-Policy': CSP, 'Cache-Control': 'no-cache' }).type('html').send(PAGE);
}

/** Mounts GET {prefix}/docs and its script for every prefix (no authentication). */
export function mountApiReference(app: Express, prefixes: readonly string[]): void {
  app.get(
    prefixes.map((p) => `${p}/docs`),
    page,
  );
  app.get(
    prefixes.map((p) => `${p}/docs/redoc.standalone.js`),
    (_req, res) => {
      res.set('Cache-Control', 'public, max-age=3600').type('js').send(redocBundle());
    },
  );
}
