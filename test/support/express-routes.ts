import type { Express } from 'express';

/** One method on one full path, as Express would route it. */
export interface ExpressRoute {
  method: string;
  path: string;
}

interface Layer {
  rawPath?: string | string[];
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

const asArray = (p: string | string[] | undefined): string[] =>
  p === undefined ? [''] : Array.isArray(p) ? p : [p];

/**
 * Every (method, path) the app routes, found by walking its router stack and every mounted
 * router below it. `router.all` layers (the 405 answers) are not routes of their own.
 */
export function expressRoutes(app: Express): ExpressRoute[] {
  const out: ExpressRoute[] = [];
  const walk = (stack: Layer[], prefixes: string[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) {
          if (method === '_all') continue;
          for (const prefix of prefixes) {
            for (const path of asArray(layer.route.path)) out.push({ method, path: prefix + path });
          }
        }
      } else if (layer.handle?.stack) {
        const mounts = asArray(layer.rawPath).map((m) => (m === '/' ? '' : m));
        walk(
          layer.handle.stack,
          prefixes.flatMap((p) => mounts.map((m) => p + m)),
        );
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, ['']);
  return out;
}
