import { emit } from '@switchboard/events';
import type { Knex, ProvisioningClaim, ProvisioningLifecycle } from '@switchboard/db';

/**
 * The worker's transitions of the provisioning lifecycle (`ProvisioningLifecycle`,
 * packages/db/src/stores/provisioning-lifecycle.ts, which states them all): each in its own
 * transaction with its event, committed durably.
 * The claim and the purchased number guard a purchase from the provider, so they must be on
 * disk before the worker moves on; ready and error carry outbox events, facts for
 * subscribers. (Commits are durable unless a transaction opts out; these never do.)
 */
export class ProvisioningTransitions {
  constructor(
    private readonly knex: Knex,
    private readonly lifecycle: ProvisioningLifecycle,
  ) {}

  claim(ref: { id: string; round: number; attempt: number; leaseMs: number }) {
    return this.knex.transaction((trx) => this.lifecycle.claim(trx, ref));
  }

  recordNumber(claim: ProvisioningClaim, phoneNumber: string): Promise<boolean> {
    return this.knex.transaction((trx) => this.lifecycle.recordNumber(trx, claim, phoneNumber));
  }

  release(claim: ProvisioningClaim, retryAt: Date): Promise<boolean> {
    return this.knex.transaction((trx) => this.lifecycle.release(trx, claim, retryAt));
  }

  /** provisioning → ready with `receptionist.ready`; false when the claim was lost. */
  ready(claim: ProvisioningClaim, phoneNumber: string, assistantId: string): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const at = new Date();
      const r = await this.lifecycle.markReady(trx, claim, { phoneNumber, assistantId, at });
      if (!r) return false;
      await emit(trx, {
        tenantId: r.tenantId,
        receptionistId: r.id,
        type: 'receptionist.ready',
        data: {
          phone_number: phoneNumber,
          assistant_id: assistantId,
          plan: r.plan,
          provisioned_at: at.toISOString(),
        },
      });
      return true;
    });
  }

  /** provisioning → error with `receptionist.error`; false when the attempt is not current. */
  fail(
    ref: { id: string; round: number; attempt: number; onlyIfLapsed?: boolean },
    error: { code: string; message: string },
  ): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const at = new Date();
      const r = await this.lifecycle.markError(trx, ref, { ...error, at });
      if (!r) return false;
      await emit(trx, {
        tenantId: r.tenantId,
        receptionistId: r.id,
        type: 'receptionist.error',
        data: { error_code: error.code, message: error.message, failed_at: at.toISOString() },
      });
      return true;
    });
  }
}
