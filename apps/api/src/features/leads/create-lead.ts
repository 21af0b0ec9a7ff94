import { createLead, toLeadFields, type LeadInput } from '@switchboard/leads';
import type { Deps } from '../../deps';
import { replayOrReject, type IdempotencyScope, type IdempotentResponse } from '../../idempotency';
import { withLeadErrors } from './errors';
import { renderLead } from './render';

/**
 * Creates a lead (201) of the key's mode (`livemode`) for the REST API or MCP, emitting
 * `lead.created` with it. With an Idempotency-Key, a key that already holds a lead replays it (or
 * is a 422 for another body) before anything else is checked: a retry of a create that succeeded
 * is never told `lead_exists` about the lead it made. Once Redis forgot the response (24 h), the
 * replay shows the lead as it is now.
 */
export async function createLeadFor(
  deps: Deps,
  tenantId: string,
  body: LeadInput,
  source: 'api' | 'mcp',
  idempotency: IdempotencyScope | null,
  livemode: boolean,
): Promise<IdempotentResponse> {
  return withLeadErrors(async () => {
    const { lead, created } = await createLead(deps, {
      tenantId,
      source,
      fields: toLeadFields(body),
      idempotency,
      livemode,
    });
    if (!created) replayOrReject(lead.idempotencyFingerprint, idempotency);
    return {
      status: 201,
      body: renderLead(lead),
      location: `/api/v1/leads/${lead.id}`,
      replayed: !created,
    };
  });
}
