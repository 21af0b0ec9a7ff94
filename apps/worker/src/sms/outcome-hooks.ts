import type { Knex, Sms } from '@switchboard/db';

/**
 * Called in the transaction that records an outbound message's final send outcome (`sent`
 * or `failed`), so that whoever owns the message (a campaign) settles it in that same
 * transaction. SMS knows nothing of its owners: they register here (imports point one way,
 * from the owners to SMS).
 */
export type SmsOutcomeHook = (db: Knex, sms: Sms) => Promise<void>;

export class SmsOutcomeHooks {
  private readonly hooks: SmsOutcomeHook[] = [];

  register(hook: SmsOutcomeHook): void {
    this.hooks.push(hook);
  }

  /** Runs every hook in order, in the caller's transaction. */
  async run(db: Knex, sms: Sms): Promise<void> {
    for (const hook of this.hooks) await hook(db, sms);
  }
}
