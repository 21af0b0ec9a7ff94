import type { FromSchema } from 'json-schema-to-ts';
import { toLeadFields, updateLead, type updateLeadBodySchema } from '@switchboard/leads';
import type { Deps } from '../../deps';
import { notFound } from '../../errors';
import { withLeadErrors } from './errors';
import { renderLead } from './render';

export type UpdateLeadBody = FromSchema<typeof updateLeadBodySchema>;

/**
 * Applies a PATCH (REST or MCP): fields given replace their values (`tags` and `metadata`
 * as a whole); `lead.updated` names the fields whose value changed, and nothing is emitted
 * when none did.
 */
export async function updateLeadFor(
  deps: Deps,
  tenantId: string,
  id: string,
  body: UpdateLeadBody,
): Promise<ReturnType<typeof renderLead>> {
  return withLeadErrors(async () => {
    const lead = await updateLead(deps, tenantId, id, toLeadFields(body));
    if (!lead) throw notFound('lead', 'id');
    return renderLead(lead);
  });
}
