import type { Knex } from 'knex';
import { newId } from '../ids';
import {
  RECEPTIONIST_COLUMNS,
  toReceptionist,
  type Receptionist,
  type ReceptionistRow,
} from './receptionists-rows';
import { ago } from './older-than';

const TABLE = 'receptionists';

/** Attempts per provisioning round (docs/API.md, Receptionists: transient failures are retried, 3 attempts). */
export const PROVISIONING_MAX_ATTEMPTS = 3;

export interface NewProvisioningReceptionist {
  tenantId: string;
  name: string;
  greeting: string | null;
  plan: string;
  areaCode: string | null;
  idempotency: { key: string; fingerprint: string } | null;
}

/** A receptionist whose provisioning (re)starts: its first job is attempt 1 of `round`. */
export interface ProvisioningStart {
  receptionist: Receptionist;
  round: number;
}

/** An attempt the worker holds: (round, attempt) names it; every later transition checks it. */
export interface ProvisioningClaim {
  receptionist: Receptionist;
  round: number;
  attempt: number;
  /** The number bought by an earlier attempt, if any: it must be used, never a second one. */
  purchasedNumber: string | null;
}

/** A receptionist the reconciler should look at: its next attempt is overdue. */
export interface OverdueProvisioning {
  id: string;
  round: number;
  /** Attempts already claimed in this round. */
  attempts: number;
}

type ClaimRow = ReceptionistRow & {
  provisioning_round: number;
  provisioning_attempts: number;
  purchased_number: string | null;
};

const CLAIM_COLUMNS = [
  ...RECEPTIONIST_COLUMNS,
  'provisioning_round',
  'provisioning_attempts',
  'purchased_number',
];

/**
 * The provisioning lifecycle of a receptionist (`receptionists.status`), one statement per
 * transition, the caller's transaction first:
 *
 *   (POST)  → provisioning ──claim──▶ attempt n ──ready──▶ ready      (receptionist.ready)
 *                  ▲                    │ ├──transient, n < 3──▶ provisioning (next attempt later)
 *                  │                    │ └──permanent, or n = 3──▶ error (receptionist.error)
 *                  └──── reprovision ◀──┴───────────────────────── error
 *
 * Statements: create (POST /receptionists), reprovision (POST /receptionists/{id}/provision),
 * claim, recordNumber, release, markReady, markError; `overdue` is the reconciler's read.
 * Events are emitted by the caller in the transaction of the transition: receptionist.ready
 * with markReady and receptionist.error with markError, both by the worker
 * (apps/worker/src/provisioning/transitions.ts); the others emit nothing. A receptionist
 * inserted already in a state (the operator CLI's `ready` ones, fixtures:
 * ReceptionistsStore.insert) is a row made so, not a transition; the CLI emits its
 * receptionist.ready in the insert's transaction.
 *
 * Invariants: an attempt is claimed by at most one worker at a time (a crashed worker's claim
 * lapses at `provisioning_locked_until`); a transition after the claim applies only while the
 * row is still at that exact (round, attempt), so a worker that lost its claim changes
 * nothing; the purchased number is recorded as soon as it exists and reused by every later
 * attempt and round.
 */
export class ProvisioningLifecycle {
  /**
   * Inserts a receptionist in `provisioning`, in one autocommit statement. With an
   * Idempotency-Key the unique (tenant_id, idempotency_key) index turns a second insert into
   * a no-op, and the receptionist that holds the key is returned with `created: false`.
   */
  async create(
    db: Knex,
    input: NewProvisioningReceptionist,
  ): Promise<{ receptionist: Receptionist; fingerprint: string | null; created: boolean }> {
    const [row] = (await db(TABLE)
      .insert({
        id: newId('rcp'),
        tenant_id: input.tenantId,
        name: input.name,
        status: 'provisioning',
        plan: input.plan,
        greeting: input.greeting,
        area_code: input.areaCode,
        idempotency_key: input.idempotency?.key ?? null,
        idempotency_fingerprint: input.idempotency?.fingerprint ?? null,
        provisioning_next_at: db.fn.now(),
      })
      .onConflict(db.raw('(tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL'))
      .ignore()
      .returning(RECEPTIONIST_COLUMNS)) as ReceptionistRow[];
    if (row) {
      return { receptionist: toReceptionist(row), fingerprint: null, created: true };
    }
    // A conflict waited for the key's holder to commit, so that row is visible now.
    const existing = (await db(TABLE)
      .select([...RECEPTIONIST_COLUMNS, 'idempotency_fingerprint'])
      .where({ tenant_id: input.tenantId, idempotency_key: input.idempotency?.key ?? null })
      .first()) as (ReceptionistRow & { idempotency_fingerprint: string | null }) | undefined;
    if (!existing) throw new Error('idempotency conflict without a holder');
    return {
      receptionist: toReceptionist(existing),
      fingerprint: existing.idempotency_fingerprint,
      created: false,
    };
  }

  /**
   * error → provisioning: a new round of attempts (the error is cleared). Undefined when the
   * receptionist is not the tenant's or not in `error`.
   */
  async reprovision(
    db: Knex,
    tenantId: string,
    id: string,
  ): Promise<ProvisioningStart | undefined> {
    const [row] = (await db(TABLE)
      .where({ tenant_id: tenantId, id, status: 'error' })
      .update({
        status: 'provisioning',
        provisioning_round: db.raw('provisioning_round + 1'),
        provisioning_attempts: 0,
        provisioning_locked_until: null,
        provisioning_next_at: db.fn.now(),
        error_code: null,
        error_message: null,
        failed_at: null,
        updated_at: db.fn.now(),
      })
      .returning([...RECEPTIONIST_COLUMNS, 'provisioning_round'])) as Array<
      ReceptionistRow & { provisioning_round: number }
    >;
    return row && { receptionist: toReceptionist(row), round: row.provisioning_round };
  }

  /**
   * Claims attempt `attempt` of round `round`: only when the previous attempt is the last one
   * claimed and no live claim holds the row. Commit it durably before calling the provider.
   */
  async claim(
    db: Knex,
    ref: { id: string; round: number; attempt: number; leaseMs: number },
  ): Promise<ProvisioningClaim | undefined> {
    const lease = db.raw('now() + make_interval(secs => ?)', [ref.leaseMs / 1000]);
    const [row] = (await db(TABLE)
      .where({
        id: ref.id,
        status: 'provisioning',
        provisioning_round: ref.round,
        provisioning_attempts: ref.attempt - 1,
      })
      .andWhere((q) =>
        q
          .whereNull('provisioning_locked_until')
          .orWhere('provisioning_locked_until', '<', db.fn.now()),
      )
      .update({
        provisioning_attempts: ref.attempt,
        provisioning_locked_until: lease,
        provisioning_next_at: lease,
        updated_at: db.fn.now(),
      })
      .returning(CLAIM_COLUMNS)) as ClaimRow[];
    return (
      row && {
        receptionist: toReceptionist(row),
        round: row.provisioning_round,
        attempt: row.provisioning_attempts,
        purchasedNumber: row.purchased_number,
      }
    );
  }

  /** Records the number the provider sold for this receptionist (commit it durably at once). */
  async recordNumber(db: Knex, claim: ProvisioningClaim, phoneNumber: string): Promise<boolean> {
    const n = await this.held(db, claim)
      .whereNull('purchased_number')
      .update({ purchased_number: phoneNumber, updated_at: db.fn.now() });
    return n === 1;
  }

  /** A transient failure with attempts left: the claim is released until `retryAt`. */
  async release(db: Knex, claim: ProvisioningClaim, retryAt: Date): Promise<boolean> {
    const n = await this.held(db, claim).update({
      provisioning_locked_until: null,
      provisioning_next_at: retryAt,
      updated_at: db.fn.now(),
    });
    return n === 1;
  }

  /** provisioning → ready. Undefined when the claim is no longer the row's (nothing changed). */
  async markReady(
    db: Knex,
    claim: ProvisioningClaim,
    done: { phoneNumber: string; assistantId: string; at: Date },
  ): Promise<Receptionist | undefined> {
    const [row] = (await this.held(db, claim)
      .update({
        status: 'ready',
        phone_number: done.phoneNumber,
        purchased_number: done.phoneNumber,
        assistant_id: done.assistantId,
        provisioned_at: done.at,
        provisioning_locked_until: null,
        provisioning_next_at: null,
        updated_at: db.fn.now(),
      })
      .returning(RECEPTIONIST_COLUMNS)) as ReceptionistRow[];
    return row && toReceptionist(row);
  }

  /**
   * provisioning → error, for the attempt `ref` names. With `onlyIfLapsed` (the reconciler,
   * for an attempt whose worker died) only once that attempt's claim has lapsed.
   */
  async markError(
    db: Knex,
    ref: { id: string; round: number; attempt: number; onlyIfLapsed?: boolean },
    error: { code: string; message: string; at: Date },
  ): Promise<Receptionist | undefined> {
    const q = this.at(db, ref);
    if (ref.onlyIfLapsed) q.andWhere('provisioning_locked_until', '<', db.fn.now());
    const [row] = (await q
      .update({
        status: 'error',
        error_code: error.code,
        error_message: error.message,
        failed_at: error.at,
        provisioning_locked_until: null,
        provisioning_next_at: null,
        updated_at: db.fn.now(),
      })
      .returning(RECEPTIONIST_COLUMNS)) as ReceptionistRow[];
    return row && toReceptionist(row);
  }

  /**
   * Receptionists in `provisioning` with nothing happening to them: the next attempt was due
   * more than `graceMs` ago (a lost job), or the running attempt's claim lapsed that long ago
   * (a dead worker). Oldest first; served by the partial index on provisioning_next_at.
   */
  async overdue(db: Knex, graceMs: number, limit: number): Promise<OverdueProvisioning[]> {
    const rows = (await db(TABLE)
      .select('id', 'provisioning_round', 'provisioning_attempts')
      .where({ status: 'provisioning' })
      .andWhere('provisioning_next_at', '<', ago(db, graceMs))
      .orderBy('provisioning_next_at')
      .limit(limit)) as Array<{
      id: string;
      provisioning_round: number;
      provisioning_attempts: number;
    }>;
    return rows.map((r) => ({
      id: r.id,
      round: r.provisioning_round,
      attempts: r.provisioning_attempts,
    }));
  }

  private at(db: Knex, ref: { id: string; round: number; attempt: number }): Knex.QueryBuilder {
    return db(TABLE).where({
      id: ref.id,
      status: 'provisioning',
      provisioning_round: ref.round,
      provisioning_attempts: ref.attempt,
    });
  }

  private held(db: Knex, claim: ProvisioningClaim): Knex.QueryBuilder {
    return this.at(db, { id: claim.receptionist.id, round: claim.round, attempt: claim.attempt });
  }
}
