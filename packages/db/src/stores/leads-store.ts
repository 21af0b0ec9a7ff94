import type { Knex } from 'knex';
import { newId } from '../ids';
import { newestFirst, type KeysetPage, type PageRequest } from '../keyset';
import {
  leadColumns,
  toLead,
  type Lead,
  type LeadFields,
  type LeadRow,
  type LeadSource,
  type LeadStatus,
} from './lead-rows';

export * from './lead-rows';

const TABLE = 'leads';

export interface NewLead {
  tenantId: string;
  source: LeadSource;
  fields: LeadFields;
  idempotency?: { key: string; fingerprint: string } | null;
  lastImportId?: string | null;
  /** Defaults to now. */
  createdAt?: Date;
  /** false: a test-mode lead (default: live). */
  livemode?: boolean;
}

export interface LeadSearchFilters {
  /** The leads of one mode (the API always gives its key's); default: live. */
  livemode?: boolean;
  /** Name or email fragment (case-insensitive), or phone digits; matched anywhere. */
  q?: string;
  status?: LeadStatus;
  tag?: string;
}

/**
 * The shortest `q` searched as a fragment anywhere (pg_trgm's trigram GIN indexes need three
 * characters); a shorter one is searched as a prefix, from btrees (migration 016).
 */
export const TRIGRAM_MIN = 3;

/** Escapes LIKE's wildcards so that `%`, `_` and `\` in a search match themselves. */
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The digits of `q` when it reads as (part of) a phone number, e.g. `+1 (415) 555`. */
export function phoneDigits(q: string): string | null {
  if (!/^[\d\s+().-]+$/.test(q)) return null;
  const digits = q.replace(/\D/g, '');
  return digits.length > 0 ? digits : null;
}

/** Final values of a lead written by a batch (every writable column the batch manages). */
export interface LeadBatchUpdate {
  id: string;
  name: string | null;
  phone: string | null;
  email: string | null;
  status: LeadStatus;
  notes: string | null;
  tags: string[];
  metadata: Record<string, string>;
}

/**
 * The leads table. Methods that take `db` first run inside the caller's transaction. A lead
 * is unique per phone (and per email among leads without a phone) within its mode, so every
 * lookup names the mode it looks in (docs/API.md, Test mode).
 */
export class LeadsStore {
  constructor(private readonly db: Knex) {}

  /** Inserts one lead; undefined when a unique index (phone, email, idempotency key) holds. */
  async insert(db: Knex, lead: NewLead): Promise<Lead | undefined> {
    const [row] = (await db(TABLE)
      .insert(this.newRow(lead))
      .onConflict()
      .ignore()
      .returning('*')) as LeadRow[];
    return row && toLead(row);
  }

  /**
   * Inserts many leads in one statement (the rows travel as one JSON parameter, so no
   * statement-parameter limit applies). Rows that hit a unique index are skipped; the
   * inserted ones are returned, built from the input (only their ids come back: parsing every
   * column of every row again would cost more than the insert's own work).
   */
  async insertMany(db: Knex, leads: readonly NewLead[]): Promise<Lead[]> {
    if (leads.length === 0) return [];
    const rows = leads.map((l) => ({ ...this.newRow(l), metadata: l.fields.metadata ?? {} }));
    const result = (await db.raw(
      `INSERT INTO leads (id, tenant_id, name, phone, email, source, status, notes, tags,
                          metadata, receptionist_id, last_import_id, created_at, updated_at,
                          livemode)
       SELECT id, tenant_id, name, phone, email, source, status, notes, tags, metadata,
              receptionist_id, last_import_id, created_at, created_at, livemode
         FROM json_to_recordset(?::json) AS x(id text, tenant_id text, name text, phone text,
              email text, source text, status text, notes text, tags text[], metadata jsonb,
              receptionist_id text, last_import_id text, created_at timestamptz,
              livemode boolean)
       ON CONFLICT DO NOTHING
       RETURNING id`,
      [JSON.stringify(rows)],
    )) as { rows: Array<{ id: string }> };
    const inserted = new Set(result.rows.map((r) => r.id));
    return rows
      .filter((r) => inserted.has(r.id))
      .map((r) =>
        toLead({ ...r, idempotency_key: null, idempotency_fingerprint: null, version: 1 }),
      );
  }

  /** Writes the final values of many leads in one statement; returns them as stored. */
  async updateMany(
    db: Knex,
    /** `changed: false`: the values are the lead's own; only `last_import_id` changes. */
    updates: ReadonlyArray<LeadBatchUpdate & { changed: boolean }>,
    lastImportId: string | null,
    at: Date,
  ): Promise<Lead[]> {
    if (updates.length === 0) return [];
    const result = (await db.raw(
      `UPDATE leads l
          SET name = x.name, phone = x.phone, email = x.email, status = x.status,
              notes = x.notes, tags = x.tags, metadata = x.metadata, last_import_id = ?,
              updated_at = CASE WHEN x.changed THEN ?::timestamptz ELSE l.updated_at END,
              version = CASE WHEN x.changed THEN l.version + 1 ELSE l.version END
         FROM json_to_recordset(?::json) AS x(id text, name text, phone text, email text,
              status text, notes text, tags text[], metadata jsonb, changed boolean)
        WHERE l.id = x.id
       RETURNING l.*`,
      [lastImportId, at, JSON.stringify(updates)],
    )) as { rows: LeadRow[] };
    return result.rows.map(toLead);
  }

  /** Writes a change (the caller holds the row's lock) and counts one more version. */
  async update(db: Knex, id: string, fields: LeadFields, at: Date): Promise<Lead> {
    const [row] = (await db(TABLE)
      .where({ id })
      .update({ ...leadColumns(fields), updated_at: at, version: db.raw('version + 1') })
      .returning('*')) as LeadRow[];
    if (!row) throw new Error(`lead ${id} vanished inside its transaction`);
    return toLead(row);
  }

  /**
   * The tenant's lead of mode `livemode`, or undefined (another tenant's id, or a lead of
   * the other mode, is simply not found).
   */
  async get(db: Knex, tenantId: string, id: string, livemode: boolean): Promise<Lead | undefined> {
    const row = (await db(TABLE).where({ tenant_id: tenantId, id, livemode }).first()) as
      LeadRow | undefined;
    return row && toLead(row);
  }

  async getForUpdate(
    db: Knex,
    tenantId: string,
    id: string,
    livemode: boolean,
  ): Promise<Lead | undefined> {
    const row = (await db(TABLE)
      .where({ tenant_id: tenantId, id, livemode })
      .forUpdate()
      .first()) as LeadRow | undefined;
    return row && toLead(row);
  }

  async findByPhone(db: Knex, tenantId: string, livemode: boolean, phone: string, lock = false) {
    const q = db(TABLE).where({ tenant_id: tenantId, livemode, phone });
    if (lock) q.forUpdate();
    const row = (await q.first()) as LeadRow | undefined;
    return row && toLead(row);
  }

  /** The phone-less lead with this email (unique per tenant, case-insensitive). */
  async findPhonelessByEmail(db: Knex, tenantId: string, livemode: boolean, email: string) {
    const row = (await db(TABLE)
      .where({ tenant_id: tenantId, livemode })
      .whereNull('phone')
      .whereRaw('lower(email) = lower(?)', [email])
      .first()) as LeadRow | undefined;
    return row && toLead(row);
  }

  async findByIdempotencyKey(db: Knex, tenantId: string, key: string): Promise<Lead | undefined> {
    const row = (await db(TABLE).where({ tenant_id: tenantId, idempotency_key: key }).first()) as
      LeadRow | undefined;
    return row && toLead(row);
  }

  /** The tenant's leads with these phones, locked for the caller's transaction. */
  async lockByPhones(
    db: Knex,
    tenantId: string,
    livemode: boolean,
    phones: readonly string[],
  ): Promise<Lead[]> {
    if (phones.length === 0) return [];
    const rows = (await db(TABLE)
      .where({ tenant_id: tenantId, livemode })
      .whereIn('phone', phones)
      .orderBy('id')
      .forUpdate()) as LeadRow[];
    return rows.map(toLead);
  }

  /**
   * The tenant's leads with these emails (lower-cased), locked; for each email the phone-less
   * lead comes first, then the oldest.
   */
  async lockByEmails(
    db: Knex,
    tenantId: string,
    livemode: boolean,
    emails: readonly string[],
  ): Promise<Lead[]> {
    if (emails.length === 0) return [];
    const rows = (await db(TABLE)
      .where({ tenant_id: tenantId, livemode })
      .whereRaw(`lower(email) IN (${emails.map(() => '?').join(', ')})`, [...emails])
      .orderByRaw('(phone IS NULL) DESC, created_at, id')
      .forUpdate()) as LeadRow[];
    return rows.map(toLead);
  }

  /**
   * One page of the tenant's leads, newest first by (created_at, id), matching every filter
   * given. `q` matches a name or an email containing it (case-insensitive) or, when it reads
   * as a phone number, a phone containing its digits; a `q` shorter than TRIGRAM_MIN matches
   * the start of them instead. LIKE wildcards in `q` match themselves.
   */
  async search(
    tenantId: string,
    filters: LeadSearchFilters,
    page: PageRequest,
  ): Promise<KeysetPage<Lead>> {
    const q = this.db(TABLE)
      .select('*')
      .where({ tenant_id: tenantId, livemode: filters.livemode ?? true });
    if (filters.status) q.andWhere('status', filters.status);
    if (filters.tag) q.andWhereRaw('tags @> ARRAY[?]::text[]', [filters.tag]);
    if (filters.q) {
      const digits = phoneDigits(filters.q);
      if (filters.q.length < TRIGRAM_MIN) {
        // No trigram: a prefix, answered by the (tenant_id, lower(...) text_pattern_ops)
        // btrees of migration 016 as a range, never by reading the tenant row by row.
        const prefix = `${escapeLike(filters.q.toLowerCase())}%`;
        q.andWhere((w) => {
          w.whereRaw(`lower(name) LIKE ? ESCAPE '\\'`, [prefix]).orWhereRaw(
            `lower(email) LIKE ? ESCAPE '\\'`,
            [prefix],
          );
          if (digits) w.orWhereRaw(`phone LIKE ? ESCAPE '\\'`, [`+${digits}%`]);
        });
      } else {
        const pattern = `%${escapeLike(filters.q)}%`;
        q.andWhere((w) => {
          w.whereRaw(`name ILIKE ? ESCAPE '\\'`, [pattern]).orWhereRaw(
            `email ILIKE ? ESCAPE '\\'`,
            [pattern],
          );
          if (digits) w.orWhereRaw(`phone LIKE ? ESCAPE '\\'`, [`%${digits}%`]);
        });
      }
    }
    return newestFirst(q, page, toLead, { time: 'created_at' });
  }

  private newRow(l: NewLead) {
    const f = l.fields;
    return {
      id: newId('lead'),
      tenant_id: l.tenantId,
      name: f.name ?? null,
      phone: f.phone ?? null,
      email: f.email ?? null,
      source: l.source,
      status: f.status ?? 'new',
      notes: f.notes ?? null,
      tags: f.tags ?? [],
      metadata: JSON.stringify(f.metadata ?? {}),
      receptionist_id: f.receptionistId ?? null,
      last_import_id: l.lastImportId ?? null,
      idempotency_key: l.idempotency?.key ?? null,
      idempotency_fingerprint: l.idempotency?.fingerprint ?? null,
      created_at: l.createdAt ?? new Date(),
      updated_at: l.createdAt ?? new Date(),
      livemode: l.livemode ?? true,
    };
  }
}
