import {
  requireVersion,
  type Db,
  type Knex,
  type LeadsStore,
  type Lead,
  type LeadFields,
  type LeadSource,
  type VersionCondition,
} from '@switchboard/db';
import { emit } from '@switchboard/events';
import { LeadExistsError, LeadReceptionistNotFoundError } from './errors';
import { leadCreated, leadUpdated } from './events';
import { diffLead, requireContact } from './fields';

export interface CreateLeadCommand {
  tenantId: string;
  source: LeadSource;
  fields: LeadFields;
  /** Idempotency-Key and request fingerprint, stored with the row (the Postgres backstop). */
  idempotency: { key: string; fingerprint: string } | null;
  /** The key's mode: false makes a test-mode lead (docs/API.md, Test mode). */
  livemode: boolean;
}

/** `created: false`: the Idempotency-Key already holds this lead (the caller replays it). */
export type CreateLeadResult = { lead: Lead; created: boolean };

const isUniqueViolation = (err: unknown): boolean => (err as { code?: string }).code === '23505';

async function requireReceptionist(
  trx: Knex,
  stores: Db['stores'],
  tenantId: string,
  id: string | null | undefined,
) {
  if (!id) return;
  if (!(await stores.receptionists.get(trx, tenantId, id))) {
    throw new LeadReceptionistNotFoundError(id);
  }
}

/** The lead of mode `livemode` holding a phone (or, for a phone-less lead, an email), if any. */
async function holder(
  db: Knex,
  store: LeadsStore,
  tenantId: string,
  livemode: boolean,
  f: { phone?: string | null; email?: string | null },
  exceptId?: string,
): Promise<LeadExistsError | null> {
  const byPhone = f.phone ? await store.findByPhone(db, tenantId, livemode, f.phone) : undefined;
  if (byPhone && byPhone.id !== exceptId) return new LeadExistsError(byPhone.id, 'phone');
  if (!f.phone && f.email) {
    const byEmail = await store.findPhonelessByEmail(db, tenantId, livemode, f.email);
    if (byEmail && byEmail.id !== exceptId) return new LeadExistsError(byEmail.id, 'email');
  }
  return null;
}

/**
 * Creates a lead and emits `lead.created` in one transaction. One lead per phone (and per
 * email among leads without a phone): a taken one is a LeadExistsError naming the lead that
 * holds it. With an Idempotency-Key the key is checked first: a key that already holds a
 * lead returns that lead (`created: false`), so a retry of a request that succeeded is a
 * replay, never a 409 about the lead it created itself.
 */
export async function createLead(
  { knex, stores }: Db,
  cmd: CreateLeadCommand,
): Promise<CreateLeadResult> {
  requireContact(cmd.fields);
  const store = stores.leads;
  return knex.transaction(async (trx) => {
    await requireReceptionist(trx, stores, cmd.tenantId, cmd.fields.receptionistId);
    // ON CONFLICT waits for a racing insert to commit, so what it hit is visible below.
    const lead = await store.insert(trx, { ...cmd, createdAt: new Date() });
    if (lead) {
      await emit(trx, leadCreated(lead));
      return { lead, created: true };
    }
    if (cmd.idempotency) {
      const held = await store.findByIdempotencyKey(trx, cmd.tenantId, cmd.idempotency.key);
      if (held) return { lead: held, created: false };
    }
    const taken = await holder(trx, store, cmd.tenantId, cmd.livemode, cmd.fields);
    if (taken) throw taken;
    throw new Error('lead insert conflicted, but no lead holds its keys');
  });
}

/**
 * Applies `fields` to the tenant's lead of mode `livemode` and emits `lead.updated` naming the
 * fields whose value changed, in one transaction; nothing changed → nothing written, nothing
 * emitted. Undefined when the lead is not the tenant's; VersionMismatch when its version (read
 * under the row's lock, so no other edit comes between) is not one `condition` accepts.
 */
export async function updateLead(
  { knex, stores }: Db,
  tenantId: string,
  livemode: boolean,
  id: string,
  fields: LeadFields,
  condition: VersionCondition = null,
): Promise<Lead | undefined> {
  const store = stores.leads;
  try {
    return await knex.transaction(async (trx) => {
      const lead = await store.getForUpdate(trx, tenantId, id, livemode);
      if (!lead) return undefined;
      requireVersion(condition, lead.version);
      const { changes, changed } = diffLead(lead, fields);
      if (changed.length === 0) return lead;
      const next = { ...lead, ...changes };
      requireContact(next);
      if (changes.receptionistId) {
        await requireReceptionist(trx, stores, tenantId, changes.receptionistId);
      }
      const taken = await holder(trx, store, tenantId, livemode, next, id);
      if (taken) throw taken;
      const updated = await store.update(trx, id, changes, new Date());
      await emit(trx, leadUpdated(updated, changed));
      return updated;
    });
  } catch (err) {
    // A racing writer took the phone (or email) between the check and the update.
    if (!isUniqueViolation(err)) throw err;
    const taken = await holder(knex, store, tenantId, livemode, fields, id);
    throw taken ?? err;
  }
}
