import type { FromSchema } from 'json-schema-to-ts';
import type { Lead, VersionCondition } from '@switchboard/db';
import { toLeadFields, updateLead, type updateLeadBodySchema } from '@switchboard/leads';
import type { Deps } from '../../deps';
import { notFound } from '../../errors';
import { withLeadErrors } from './errors';

export type UpdateLeadBody = FromSchema<typeof updateLeadBodySchema>;

/**
 * Applies a PATCH (REST or MCP): fields given replace their values (`tags` and `metadata`
 * as a whole); `lead.updated` names the fields whose value changed, and nothing is emitted
 * when none did. With a version `condition` (REST's If-Match), a lead at another version is
 * a 412 (VersionMismatch, checked under the lead's lock). A lead of the other mode than
 * `livemode` is not found (docs/API.md, Test mode).
 */
export async function updateLeadFor(
  deps: Deps,
  tenantId: string,
  livemode: boolean,
  id: string,
  body: UpdateLeadBody,
  condition: VersionCondition = null,
): Promise<Lead> {
  return withLeadErrors(async () => {
    const lead = await updateLead(deps, tenantId, livemode, id, toLeadFields(body), condition);
    if (!lead) throw notFound('lead', 'id');
    return lead;
  });
}
