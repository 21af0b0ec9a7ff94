import { newTimeOrderedIdSql, toOpenDelivery, type Knex, type OpenDelivery } from '@switchboard/db';
import {
  LEGACY_TAKES_SQL,
  OPEN_COLUMNS,
  SUBSCRIPTION_TAKES_SQL,
  type OpenRow,
} from '../../packages/db/src/stores/delivery-lifecycle-sql';
import { aboutSubscriptionSql } from '../../packages/db/src/stores/operational-events-sql';

/**
 * A test's fan-out: the deliveries of `eventIds` made `pending` (0 claims, due now), one per
 * subscription that takes each event and one for its receptionist's legacy webhook_url (the
 * relay's matching), the events' outbox rows deleted; on a re-run nothing new is made and
 * the open deliveries of those events are returned. The worker never makes a delivery so
 * (its relay creates them claimed: DeliveryLifecycle.publishNext): a test uses this to drive
 * the claim, record and exhaust statements on deliveries no relay has touched.
 */
export async function fanOut(db: Knex, eventIds: readonly string[]): Promise<OpenDelivery[]> {
  if (eventIds.length === 0) return [];
  const cols = OPEN_COLUMNS.split(', ');
  const { rows } = (await db.raw(
    `WITH q AS (
       SELECT DISTINCT unnest(?::text[]) AS id
     ), taken AS (
       DELETE FROM event_outbox o USING q WHERE o.event_id = q.id RETURNING o.event_id
     ), ev AS (
       SELECT e.id, e.tenant_id, e.receptionist_id, e.type, e.livemode,
              ${aboutSubscriptionSql('e')} AS about
         FROM taken t JOIN events e ON e.id = t.event_id
     ), targets AS (
       SELECT ev.tenant_id, ev.id AS event_id, s.id AS subscription_id, NULL AS receptionist_id
         FROM ev JOIN webhook_subscriptions s ON ${SUBSCRIPTION_TAKES_SQL('ev')}
       UNION ALL
       SELECT ev.tenant_id, ev.id, NULL, r.id
         FROM ev JOIN receptionists r ON ${LEGACY_TAKES_SQL('ev')}
     ), made AS (
       INSERT INTO webhook_deliveries
              (id, tenant_id, event_id, subscription_id, receptionist_id, next_attempt_at)
       SELECT ${newTimeOrderedIdSql('dlv')}, tenant_id, event_id, subscription_id,
              receptionist_id, now()
         FROM targets
       ON CONFLICT DO NOTHING
    RETURNING ${OPEN_COLUMNS}
     )
     SELECT ${OPEN_COLUMNS} FROM made
     -- Seen in the snapshot before the inserts: no row twice.
     UNION ALL SELECT ${cols.map((c) => `d.${c}`).join(', ')}
                 FROM q JOIN webhook_deliveries d ON d.event_id = q.id
                WHERE d.status IN ('pending', 'delivering')`,
    [[...eventIds]],
  )) as { rows: OpenRow[] };
  return rows.map(toOpenDelivery);
}
