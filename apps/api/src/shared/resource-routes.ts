import { notFound } from '../errors';
import type { AuthContext } from '../http/types';
import { etagHeaderDoc, sendVersioned } from '../http/if-match';
import {
  idempotencyKeyHeaderDoc,
  idempotentReplayHeaderDoc,
  respondIdempotently,
  type Idempotency,
  type IdempotencyScope,
  type IdempotentResponse,
} from '../idempotency';
import { defineRoute, type ResponseSpec, type RouteDef } from '../openapi/route';

/** What a route declares about itself in the document, whatever it does. */
type RouteDoc = Pick<
  RouteDef,
  'path' | 'operationId' | 'summary' | 'description' | 'tag' | 'scope' | 'portal' | 'errors'
>;

/** The success answer of a route that has one: its description, schema and example body. */
type Answer = Required<Pick<ResponseSpec, 'description' | 'schema' | 'example'>>;

/** The `Location` header of an answer naming one resource ("The call: /api/v1/calls/{id}"). */
export const locationHeaderDoc = (description: string) => ({
  Location: { description, schema: { type: 'string' } },
});

/**
 * `POST` that creates one of the tenant's resources with Idempotency-Key semantics
 * (docs/API.md, Idempotency): the optional header, and an answer with `Location` and
 * `Idempotent-Replayed`, are the same on every such route; `create` makes the resource (with
 * `scope`, the key's backstop, when a key came) and returns the answer to store and send.
 */
export function defineCreateRoute<Body>(
  idempotency: Idempotency,
  o: RouteDoc & {
    body: object;
    bodyExample: unknown;
    /** 201: made now; 202: accepted now, finished by the worker. */
    status: 201 | 202;
    answer: Answer & { location: string };
    /** `auth`: who asks (its `livemode` is the mode of what it makes: docs/API.md, Test mode). */
    create: (
      tenantId: string,
      body: Body,
      scope: IdempotencyScope | null,
      auth: AuthContext,
    ) => Promise<IdempotentResponse>;
  },
): RouteDef {
  const { body, bodyExample, status, answer, create, ...doc } = o;
  const { location, ...spec } = answer;
  return defineRoute({
    ...doc,
    method: 'post',
    body,
    bodyExample,
    headers: [idempotencyKeyHeaderDoc],
    responses: {
      [status]: {
        ...spec,
        headers: { ...locationHeaderDoc(location), ...idempotentReplayHeaderDoc },
      },
    },
    handler: async (req, res) => {
      const tenantId = req.auth.tenantId;
      const input = req.valid.body as Body;
      await respondIdempotently(idempotency, req, res, (scope) =>
        create(tenantId, input, scope, req.auth),
      );
    },
  });
}

/**
 * `GET` of one of the tenant's resources by the `:id` of its path: `find` looks it up among
 * the tenant's own (another tenant's id is simply not found, a 404 naming `name`), `render`
 * makes the answer. A resource clients edit under If-Match gives its `version`: the answer
 * carries it as its ETag.
 */
export function defineGetRoute<T>(
  o: RouteDoc & {
    params: object;
    answer: Answer;
    /** What the 404's message calls it ("campaign", "SMS"). */
    name: string;
    /** `livemode`: the key's mode; a resource of the other mode is not found (Test mode). */
    find: (tenantId: string, id: string, livemode: boolean) => Promise<T | undefined>;
    render: (found: T) => unknown;
    version?: (found: T) => number;
  },
): RouteDef {
  const { params, answer, name, find, render, version, ...doc } = o;
  return defineRoute({
    ...doc,
    method: 'get',
    params,
    responses: { 200: version ? { ...answer, headers: etagHeaderDoc } : answer },
    handler: async (req, res) => {
      const found = await find(req.auth.tenantId, req.valid.params.id as string, req.auth.livemode);
      if (!found) throw notFound(name, 'id');
      if (version) sendVersioned(res, version(found), await render(found));
      else res.json(await render(found));
    },
  });
}
