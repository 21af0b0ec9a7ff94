import type { Request, RequestHandler, Response } from 'express';

/**
 * One step of a declared route: authentication, body parsing, validation, the handler. A
 * step fails by throwing (or rejecting) and never answers otherwise, so a step runs only
 * when every step before it succeeded. A route's steps run in one Express handler
 * (`runSteps`), not as a middleware each: one dispatch and one tracked promise per request.
 */
export type Step = (req: Request, res: Response) => void | Promise<void>;

/** Middleware that calls `next` (a body parser) as a step: `next(err)` becomes a rejection. */
export const fromMiddleware =
  (middleware: RequestHandler): Step =>
  (req, res) =>
    new Promise<void>((resolve, reject) => {
      void middleware(req, res, (err?: unknown) => (err ? reject(err) : resolve()));
    });

/** The steps in turn as one handler; a step that returns no promise costs no promise turn. */
export function runSteps(steps: readonly Step[]): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    for (const step of steps) {
      const pending = step(req, res);
      if (pending) await pending;
    }
  };
}
