import type { FromSchema } from 'json-schema-to-ts';
import type { Deps } from '../../deps';
import { renderLead } from './render';
import type { leadSearchQuerySchema } from './schemas';

export type LeadSearchQuery = FromSchema<typeof leadSearchQuerySchema>;

/**
 * One page of the tenant's leads of mode `livemode` matching the filters, newest first, as
 * `{data, has_more, cursor}`. A blank `q` is no filter. The cursor holds the position only
 * (docs/API.md, Pagination): keep the filters the same from page to page.
 */
export async function searchLeadsFor(
  deps: Deps,
  tenantId: string,
  livemode: boolean,
  query: LeadSearchQuery,
) {
  const q = query.q?.trim();
  const page = await deps.stores.leads.search(
    tenantId,
    { livemode, q: q || undefined, status: query.status, tag: query.tag },
    {
      limit: query.limit ?? 10,
      after: query.cursor ? deps.cursors.decode('leads', tenantId, query.cursor) : null,
    },
  );
  return {
    data: page.rows.map(renderLead),
    has_more: page.next !== null,
    cursor: page.next ? deps.cursors.encode('leads', tenantId, page.next) : null,
  };
}
