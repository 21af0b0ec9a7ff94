import { randomInt } from 'node:crypto';
import { emit } from '@switchboard/events';
import type { Receptionist } from '@switchboard/db';
import type { CliContext } from '../context';

/** A fictional North American number in the 555-01xx block reserved for fiction. */
export const fictionalNumber = (): string =>
  `+1${randomInt(201, 990)}55501${randomInt(0, 100).toString().padStart(2, '0')}`;

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
    const receptionist = await ctx.receptionists.create(
      {
        tenantId,
        name,
        status: 'ready',
        phoneNumber: fictionalNumber(),
        assistantId: `asst_${randomInt(1e9, 1e10 - 1)}`,
        plan: 'standard',
        greeting: greeting ?? `Thanks for calling ${name}, how can I help?`,
        provisionedAt: now,
      },
      trx,
    );
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
