import type { Request } from 'express';
import type { KeysetPage, KeysetPosition } from '@switchboard/db';
import type { CursorCodec, CursorFamily } from './cursor';

export interface PageRequest {
  limit: number;
  after: KeysetPosition | null;
}

/** Reads the validated `limit` and `cursor` of a list request. */
export function pageRequest(req: Request, codec: CursorCodec, family: CursorFamily): PageRequest {
  const { limit, cursor } = req.valid.query as { limit: number; cursor?: string };
  return {
    limit,
    after: cursor ? codec.decode(family, req.auth.tenantId, cursor) : null,
  };
}

/** `{data, has_more, cursor}`: the shape of every list except GET /calls. */
export function pageBody<T, Out>(
  req: Request,
  codec: CursorCodec,
  family: CursorFamily,
  page: KeysetPage<T>,
  render: (item: T) => Out,
): { data: Out[]; has_more: boolean; cursor: string | null } {
  return {
    data: page.rows.map(render),
    has_more: page.next !== null,
    cursor: page.next ? codec.encode(family, req.auth.tenantId, page.next) : null,
  };
}
