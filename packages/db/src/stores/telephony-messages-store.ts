import type { Knex } from 'knex';

const TABLE = 'telephony_messages';

/**
 * The ids of the telephony messages ingestion applied (a replay of one is a no-op). Both
 * statements run in ingestion's transaction, the one that applies the message.
 */
export class TelephonyMessagesStore {
  /**
   * Records a message's id; false when it was recorded already (a replay, skipped). The id
   * is unique across partitions by the table's trigger.
   */
  async record(trx: Knex, message: { id: string; type: string }): Promise<boolean> {
    const recorded = await trx(TABLE)
      .insert({ id: message.id, type: message.type })
      .onConflict()
      .ignore()
      .returning('id');
    return recorded.length > 0;
  }

  /** Notes the call a recorded message was about. */
  async attachCall(trx: Knex, messageId: string, callId: string): Promise<void> {
    await trx(TABLE).where({ id: messageId }).update({ call_id: callId });
  }
}
