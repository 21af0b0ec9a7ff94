import { randomInt } from 'node:crypto';
import { emit } from '@switchboard/events';
import { fictionalPhoneNumber } from '@switchboard/simulation';
import type { Receptionist } from '@switchboard/db';
import type { CliContext } from '../context';

/**
 * Creates a receptionist that is already provisioned (`ready`, with a number and an
 * assistant) and emits `receptionist.ready` in the same transaction.
 */
export async function createReadyReceptionist(
  ctx: CliContext,
  tenantId: string,
  name: string,
  greeting?: string,
): Promise<Receptionist> {
  return ctx.knex.transaction(async (trx) => {
    const now = new Date();
    const receptionist = await ctx.stores.receptionists.insert(trx, {
      tenantId,
      name,
      status: 'ready',
      phoneNumber: fictionalPhoneNumber(),
      assistantId: `asst_${randomInt(1e9, 1e10 - 1)}`,
      plan: 'standard',
      greeting: greeting ?? `Thanks for calling ${name}, how can I help?`,
      provisionedAt: now,
    });
    await emit(trx, {
      tenantId,
      receptionistId: receptionist.id,
      type: 'receptionist.ready',
      data: {
        phone_number: receptionist.phoneNumber as string,
        assistant_id: receptionist.assistantId as string,
        plan: receptionist.plan,
        provisioned_at: now.toISOString(),
      },
    });
    return receptionist;
  });
}
