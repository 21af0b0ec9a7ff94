import {
  type LeadsStore,
  type ImportBatchOutcome,
  type ImportRowError,
  type Knex,
  type Lead,
  type LeadBatchUpdate,
  type LeadFields,
  type LeadImport,
} from '@switchboard/db';
import { emitMany, type EmitInput } from '@switchboard/events';
import { leadCreated, leadUpdated } from '../events';
import { diffLead } from '../fields';
import { LEAD_METADATA_KEYS_MAX } from '../schema';
import { rowKey, type ParsedRow } from './rows';

type ValidRow = Extract<ParsedRow, { ok: true }>;
type LeadEvent = EmitInput<'lead.created'> | EmitInput<'lead.updated'>;

/** An existing lead with a row's values applied: blanks keep, tags replace, metadata merges. */
function withRow(lead: Lead, f: LeadFields): LeadBatchUpdate | string {
  const metadata = f.metadata ? { ...lead.metadata, ...f.metadata } : lead.metadata;
  if (Object.keys(metadata).length > LEAD_METADATA_KEYS_MAX) {
    return `metadata would hold more than ${LEAD_METADATA_KEYS_MAX} keys`;
  }
  return {
    id: lead.id,
    name: f.name ?? lead.name,
    phone: lead.phone ?? f.phone ?? null,
    email: f.email ?? lead.email,
    status: f.status ?? lead.status,
    notes: f.notes ?? lead.notes,
    tags: f.tags ?? lead.tags,
    metadata,
  };
}

/**
 * Two rows of one key folded as if applied one after the other: the later row's values win,
 * its blanks keep the earlier row's, metadata merges. So a file imports the same whether its
 * duplicate rows share a batch or not.
 */
function laterWins(earlier: LeadFields, later: LeadFields): LeadFields {
  const metadata =
    earlier.metadata || later.metadata ? { ...earlier.metadata, ...later.metadata } : undefined;
  return { ...earlier, ...later, ...(metadata ? { metadata } : {}) };
}

/** The tenant's leads of the import's mode that hold these rows' keys, locked, by key. */
async function lockExisting(
  trx: Knex,
  store: LeadsStore,
  imp: LeadImport,
  rows: readonly ValidRow[],
): Promise<Map<string, Lead>> {
  const { tenantId, livemode } = imp;
  const phones = rows.flatMap((r) => (r.fields.phone ? [r.fields.phone] : []));
  const emails = rows.flatMap((r) =>
    r.fields.phone ? [] : [(r.fields.email as string).toLowerCase()],
  );
  const byKey = new Map<string, Lead>();
  for (const lead of await store.lockByPhones(trx, tenantId, livemode, phones))
    byKey.set(lead.phone as string, lead);
  // Phone-less leads first, then the oldest: the first lead seen for an email wins.
  for (const lead of await store.lockByEmails(trx, tenantId, livemode, emails)) {
    const key = `email:${(lead.email as string).toLowerCase()}`;
    if (!byKey.has(key)) byKey.set(key, lead);
  }
  return byKey;
}

/**
 * Applies one batch of rows inside the caller's transaction: creates the leads whose key is
 * new, updates the known ones, emits their events, and returns what to add to the import's
 * counters. Within the file the last row of a key wins and the key is counted once: earlier
 * rows of the same batch, and rows whose lead this import already wrote in an earlier batch
 * (`last_import_id`), count as duplicates.
 */
export async function applyBatch(
  trx: Knex,
  store: LeadsStore,
  imp: LeadImport,
  rows: readonly ParsedRow[],
): Promise<ImportBatchOutcome> {
  const errors: ImportRowError[] = [];
  const lastByKey = new Map<string, ValidRow>();
  let duplicates = 0;
  for (const r of rows) {
    if (!r.ok) {
      errors.push(r.error);
      continue;
    }
    const earlier = lastByKey.get(r.key);
    if (earlier) duplicates++;
    lastByKey.set(r.key, earlier ? { ...r, fields: laterWins(earlier.fields, r.fields) } : r);
  }
  const events: Array<{ row: number; event: LeadEvent }> = [];
  // Final values per existing lead (two keys of one batch may reach the same lead).
  const updates = new Map<string, { lead: Lead; next: LeadBatchUpdate; row: number }>();
  let created = 0;
  let updated = 0;
  let pending = [...lastByKey.values()];
  // Rows with a phone are inserted first (the unique phone index says which exist: most
  // rows of a typical file are new, and this spares a lookup); rows keyed by email look
  // first, because their lead may be one that has a phone. The second pass updates what
  // the first could not insert (it existed, or a concurrent writer created it meanwhile).
  for (let pass = 0; pass < 2 && pending.length > 0; pass++) {
    const insertFirst = pass === 0 ? pending.filter((r) => r.fields.phone) : [];
    const lookFirst = pass === 0 ? pending.filter((r) => !r.fields.phone) : pending;
    const existing = await lockExisting(trx, store, imp, lookFirst);
    const fresh: ValidRow[] = [...insertFirst];
    for (const r of lookFirst) {
      const lead = existing.get(r.key);
      if (!lead) {
        fresh.push(r);
        continue;
      }
      const seen = updates.get(lead.id);
      const next = withRow(seen ? { ...lead, ...seen.next } : lead, r.fields);
      if (typeof next === 'string') {
        errors.push({ row: r.row, field: 'metadata', message: next });
        continue;
      }
      if (seen || lead.lastImportId === imp.id) duplicates++;
      else updated++;
      updates.set(lead.id, { lead, next, row: r.row });
    }
    if (pass === 1) {
      for (const r of fresh) {
        errors.push({
          row: r.row,
          field: null,
          message: 'The row could not be saved; import it again',
        });
      }
      break;
    }
    const inserted = await store.insertMany(
      trx,
      fresh.map((r) => ({
        tenantId: imp.tenantId,
        source: 'csv_import' as const,
        fields: r.fields,
        lastImportId: imp.id,
        // An import made with a test-mode key makes test-mode leads.
        livemode: imp.livemode,
      })),
    );
    const insertedKeys = new Map(inserted.map((l) => [rowKey(l), l]));
    for (const r of fresh) {
      const lead = insertedKeys.get(r.key);
      if (lead) {
        created++;
        events.push({ row: r.row, event: leadCreated(lead) });
      }
    }
    pending = fresh.filter((r) => !insertedKeys.has(r.key));
  }
  const writes = [...updates.values()].map((u) => ({
    ...u,
    changed: diffLead(u.lead, u.next).changed,
  }));
  const stored = await store.updateMany(
    trx,
    writes.map((w) => ({ ...w.next, changed: w.changed.length > 0 })),
    imp.id,
    new Date(),
  );
  const byId = new Map(stored.map((l) => [l.id, l]));
  for (const w of writes) {
    const lead = byId.get(w.lead.id);
    if (lead && w.changed.length > 0) {
      events.push({ row: w.row, event: leadUpdated(lead, w.changed) });
    }
  }
  events.sort((a, b) => a.row - b.row);
  await emitMany(
    trx,
    events.map((e) => e.event),
  );
  errors.sort((a, b) => a.row - b.row);
  return { rows: rows.length, created, updated, skipped: errors.length, duplicates, errors };
}
