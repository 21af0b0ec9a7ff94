import type { Request, Response } from 'express';
import type { Scope } from '@switchboard/db';

export type Method = 'get' | 'post' | 'patch' | 'delete' | 'put';

export interface ResponseSpec {
  description: string;
  schema?: object;
}

/**
 * A route is declared once: its schemas validate requests and, from the same objects, build
 * its OpenAPI entry. A route that is not declared this way does not exist.
 */
export interface RouteDef {
  method: Method;
  /** Express path below the version prefix, e.g. `/receptionists/:id`. */
  path: string;
  summary: string;
  tag: string;
  /** Required scope; `null` for routes with their own authentication or none. */
  scope: Scope | null;
  params?: object;
  query?: object;
  body?: object;
  /** Extra request headers worth documenting (e.g. Idempotency-Key). */
  headers?: Array<{ name: string; description: string; required?: boolean }>;
  responses: Record<number, ResponseSpec>;
  handler: (req: Request, res: Response) => Promise<void> | void;
}

export const defineRoute = (def: RouteDef): RouteDef => def;
