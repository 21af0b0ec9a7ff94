import type { LeadStatus } from './lead-rows';

/**
 * Who a campaign is for, in one of the three forms of POST /campaigns (docs/API.md,
 * Campaigns). Lists travel as one JSON parameter, so no statement-parameter limit applies.
 */
export type RecipientSource =
  | { leadIds: readonly string[] }
  | { leadFilter: { status?: LeadStatus; tag?: string } }
  | { phones: readonly string[] };

/**
 * The `picked` CTE of the recipients insert: one row per distinct phone with the name of the
 * tenant's lead that has it (or null), the lead id, and `ord`, the sending order. Leads are
 * those of the campaign's mode only: a test campaign never reaches a live lead, nor a live
 * campaign a test lead (docs/API.md, Test mode).
 * - lead ids: the tenant's leads with a phone, in the order given (a repeated id counts once;
 *   leads without a phone are skipped; ids of other tenants match nothing);
 * - a lead filter: the tenant's leads with a phone matching it, oldest first, at most `cap`;
 * - phones: each distinct number once, in the order of its first occurrence, with the name
 *   of the tenant's lead that has that number, if there is one.
 */
export function pickedRecipients(
  tenantId: string,
  livemode: boolean,
  source: RecipientSource,
  cap: number,
): { sql: string; bindings: Array<string | number | boolean> } {
  if ('phones' in source) {
    return {
      sql: `SELECT i.phone, l.name, l.id AS lead_id, i.ord
              FROM (SELECT phone, min(ord) AS ord
                      FROM json_array_elements_text(?::json) WITH ORDINALITY AS x(phone, ord)
                     GROUP BY phone) i
              LEFT JOIN leads l ON l.tenant_id = ? AND l.livemode = ? AND l.phone = i.phone`,
      bindings: [JSON.stringify(source.phones), tenantId, livemode],
    };
  }
  if ('leadIds' in source) {
    return {
      sql: `SELECT DISTINCT ON (l.phone) l.phone, l.name, l.id AS lead_id, i.ord
              FROM (SELECT id, min(ord) AS ord
                      FROM json_array_elements_text(?::json) WITH ORDINALITY AS x(id, ord)
                     GROUP BY id) i
              JOIN leads l ON l.id = i.id AND l.tenant_id = ? AND l.livemode = ?
             WHERE l.phone IS NOT NULL
             ORDER BY l.phone, i.ord`,
      bindings: [JSON.stringify(source.leadIds), tenantId, livemode],
    };
  }
  const { status, tag } = source.leadFilter;
  const where = ['tenant_id = ?', 'livemode = ?', 'phone IS NOT NULL'];
  const bindings: Array<string | number | boolean> = [tenantId, livemode];
  if (status) {
    where.push('status = ?');
    bindings.push(status);
  }
  if (tag) {
    where.push('tags @> ARRAY[?]::text[]');
    bindings.push(tag);
  }
  bindings.push(cap);
  return {
    sql: `SELECT phone, name, id AS lead_id, row_number() OVER (ORDER BY created_at, id) AS ord
            FROM (SELECT phone, name, id, created_at FROM leads
                   WHERE ${where.join(' AND ')}
                   ORDER BY created_at, id LIMIT ?) f`,
    bindings,
  };
}
