import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';

const sha256 = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * The token an operator presented: the password of HTTP Basic auth (what a browser sends
 * after its login prompt; the user name is ignored) or a Bearer token (scripts, curl).
 */
export function presentedToken(header: string | undefined): string | null {
  const match = /^(basic|bearer) +(\S+)$/i.exec(header?.trim() ?? '');
  if (!match) return null;
  const [, scheme, value] = match as unknown as [string, string, string];
  if (scheme.toLowerCase() === 'bearer') return value;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : decoded.slice(colon + 1);
}

/**
 * Lets a request through only with QUEUE_DASHBOARD_TOKEN. Compared as SHA-256 digests with
 * timingSafeEqual, so the time taken says nothing about the token (nor its length). A refusal
 * asks for Basic auth: a browser then shows its login prompt and resends the credentials on
 * every request of the page, the dashboard's own API calls included.
 */
export function requireDashboardToken(token: string): RequestHandler {
  const expected = sha256(token);
  return (req, res, next) => {
    // An operator page: never cached, never framed by another site.
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Frame-Options', 'DENY');
    const presented = presentedToken(req.headers.authorization);
    if (presented !== null && timingSafeEqual(sha256(presented), expected)) return next();
    res.setHeader('WWW-Authenticate', 'Basic realm="Switchboard queues", charset="UTF-8"');
    res.status(401).json({
      error: {
        type: 'authentication_error',
        code: 'invalid_token',
        message: 'The queue dashboard needs QUEUE_DASHBOARD_TOKEN (Basic password or Bearer)',
      },
    });
  };
}
