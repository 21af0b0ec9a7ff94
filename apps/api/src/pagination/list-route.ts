import type { KeysetPage, Scope } from '@switchboard/db';
import type { AuthContext } from '../http/types';
import { defineRoute, type RouteDef } from '../openapi/route';
import { pageExample, pageQuerySchema, paginated } from '../shared/schemas';
import type { CursorCodec, CursorFamily } from './cursor';
import { pageBody, pageRequest, type PageRequest } from './page';

/**
 * `GET` of one kind of a tenant's resources, newest first, a keyset page at a time
 * (`{data, has_more, cursor}`, cursors of `family`), with no filters: the list routes of
 * receptionists, webhook subscriptions and campaigns. Lists with filters (calls, SMS, leads,
 * deliveries) write their own handler with the same page helpers.
 */
export function defineListRoute<Row>(o: {
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  scope: Scope;
  portal?: RouteDef['portal'];
  /** The 200's description, e.g. "A page of campaigns". */
  description: string;
  itemSchema: object;
  itemExample: unknown;
  family: CursorFamily;
  cursors: CursorCodec;
  list: (tenantId: string, page: PageRequest, auth: AuthContext) => Promise<KeysetPage<Row>>;
  render: (row: Row) => unknown;
}): RouteDef {
  return defineRoute({
    method: 'get',
    path: o.path,
    operationId: o.operationId,
    summary: o.summary,
    tag: o.tag,
    scope: o.scope,
    ...(o.portal ? { portal: o.portal } : {}),
    query: pageQuerySchema,
    responses: {
      200: {
        description: o.description,
        schema: paginated(o.itemSchema),
        example: pageExample(o.itemExample),
      },
    },
    handler: async (req, res) => {
      const page = await o.list(req.auth.tenantId, pageRequest(req, o.cursors, o.family), req.auth);
      res.json(pageBody(req, o.cursors, o.family, page, o.render));
    },
  });
}
