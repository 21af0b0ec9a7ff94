import { ASYNC_COMMIT_CTE } from '../commit';
import { newTimeOrderedIdSql } from '../ids';
import {
  DELIVERY_COLUMNS,
  EVENT_JSON,
  LEGACY_TAKES_SQL,
  SUBSCRIPTION_JSON,
  SUBSCRIPTION_TAKES_SQL,
  type ClaimRow,
} from './delivery-lifecycle-sql';
import { aboutSubscriptionSql } from './operational-events-sql';

/** A row of PUBLISH_NEXT_SQL: a delivery made (null columns when none was), and the batch's counts. */
export interface PublishNextRow extends Partial<ClaimRow> {
  /** Events taken out of the outbox. */
  relayed: number;
  /** The last tenant served its first event ('' when none was). */
  next_tenant: string | null;
}

/**
 * SQL: CTE `cte`, the tenants of `event_outbox` (alias `o`) that satisfy `bound`, in id
 * order, one index probe each (a skip scan of `event_outbox_tenant_idx`), ending in a NULL.
 */
const skipScan = (cte: string, bound: string): string => `${cte}(tenant_id) AS (
         SELECT (SELECT min(o.tenant_id) FROM event_outbox o WHERE ${bound})
         UNION ALL
         SELECT (SELECT min(o.tenant_id) FROM event_outbox o
                  WHERE o.tenant_id > ${cte}.tenant_id AND ${bound})
           FROM ${cte} WHERE ${cte}.tenant_id IS NOT NULL
       )`;

/** The turn order of the tenants of this batch (after $1 first, then from the first), or its reverse. */
const TURN_ORDER = (tenant: string, dir = ''): string => `${tenant} <= $1${dir}, ${tenant}${dir}`;

/**
 * The relay's batch, one statement (autocommit; asynchronous, ASYNC_COMMIT_CTE): claims
 * outbox events and fans them out, each delivery inserted claimed for $7 seconds by the
 * caller, which makes its first attempt after this returns (DeliveryLifecycle.publishNext).
 * One round trip where a transaction took four (BEGIN, the claim, the fan-out, COMMIT), and
 * the relay's batch waits on each (docs/decisions/0129-the-relay-batch-is-one-statement.md).
 *
 * $1 the last tenant served (`after`), $2 at most this many tenants, $3 and $4 the tenants
 * whose room is not $5 and theirs, $5 any other tenant's room, $6 the batch's room
 * (deliveries), $7 the claims' seconds.
 *
 * - `turn`: the tenants with events in the outbox, in turn (those after $1 in id order, then
 *   from the first: two skip scans of `event_outbox_tenant_idx`, which stop at the $2-th),
 *   those without room left out (docs/decisions/0045-tenants-take-turns.md).
 * - `claimed`: each one's oldest ceil($6 / tenants) events, locked (SKIP LOCKED: several
 *   relays work side by side); `ev` reads each event by its key (the outbox row carries its
 *   `created_at`), a lookup per row that prunes to its day.
 * - `targets`: the deliveries each event makes (SUBSCRIPTION_TAKES_SQL, LEGACY_TAKES_SQL);
 *   `kept`: a tenant's events in order while their deliveries fit its room (its first
 *   always), then, one event of each tenant at a time, while the batch's fit $6 (the first
 *   always). An event is fanned out whole or stays in the outbox (its lock ends with the
 *   statement).
 * - `taken` deletes the kept events' outbox rows and `made` inserts their deliveries, whose
 *   ids carry their event's rank in its tenant (`k`): one batch's deliveries share created_at,
 *   and list in their events' order (decision 0140). The event rows are read, never written.
 *
 * One row at least (LEFT JOIN): `relayed` and `next_tenant` when no delivery was made. The
 * deliveries come one event of each tenant at a time, in turn: the attempts start in that order.
 */
export const PUBLISH_NEXT_SQL = `WITH RECURSIVE ${ASYNC_COMMIT_CTE},
     ${skipScan('t', 'o.tenant_id > $1')}, ${skipScan('w', 'o.tenant_id <= $1')},
     turn AS (
       SELECT tenant_id, room FROM (
         SELECT a.tenant_id,
                coalesce((SELECT r.room FROM unnest($3::text[], $4::int[]) AS r(tenant_id, room)
                           WHERE r.tenant_id = a.tenant_id), $5::int) AS room
           FROM (SELECT tenant_id FROM t WHERE tenant_id IS NOT NULL
                 UNION ALL
                 SELECT tenant_id FROM w WHERE tenant_id IS NOT NULL) a
       ) b
       -- In turn already (t, then w): the scans stop at the $2-th tenant with room.
       WHERE room > 0 LIMIT $2
     ), share AS (
       SELECT greatest(1, ceil($6::float8 / greatest(count(*), 1)))::int AS n FROM turn
     ), claimed AS (
       SELECT x.event_id, x.created_at, turn.room
         FROM turn CROSS JOIN share CROSS JOIN LATERAL (
           SELECT o.event_id, o.created_at FROM event_outbox o
            WHERE o.tenant_id = turn.tenant_id
            ORDER BY o.created_at LIMIT share.n
            FOR UPDATE OF o SKIP LOCKED) x
     ), ev AS (
       SELECT c.room, e.*
         FROM claimed c CROSS JOIN LATERAL (
              SELECT e.id, e.tenant_id, e.receptionist_id, e.type, e.livemode, e.data,
                     e.created_at, e.traceparent, ${aboutSubscriptionSql('e')} AS about
                FROM events e WHERE e.id = c.event_id AND e.created_at = c.created_at
              -- Kept apart (not pulled up into a join): one lookup per claimed row.
              OFFSET 0) e
     ), targets AS (
       SELECT ev.id AS event_id, s.id AS subscription_id, NULL::text AS receptionist_id
         FROM ev JOIN webhook_subscriptions s ON ${SUBSCRIPTION_TAKES_SQL('ev')}
       UNION ALL
       SELECT ev.id, NULL::uuid, r.id FROM ev JOIN receptionists r ON ${LEGACY_TAKES_SQL('ev')}
     ), sized AS (
       SELECT ev.id, ev.tenant_id, ev.created_at, ev.room, count(g.event_id) AS n
         FROM ev LEFT JOIN targets g ON g.event_id = ev.id
        GROUP BY ev.id, ev.tenant_id, ev.created_at, ev.room
     ), ranked AS (
       SELECT z.*, row_number() OVER w AS k, sum(z.n) OVER w AS upto
         FROM sized z WINDOW w AS (PARTITION BY z.tenant_id ORDER BY z.created_at, z.id)
     ), fits AS (
       SELECT r.*, sum(r.n) OVER w AS total, row_number() OVER w AS g
         FROM ranked r WHERE r.k = 1 OR r.upto <= r.room
       WINDOW w AS (ORDER BY r.k, ${TURN_ORDER('r.tenant_id')})
     ), kept AS (
       SELECT id, tenant_id, k FROM fits WHERE g = 1 OR total <= $6
     ), taken AS (
       -- By key, whatever the plan thought of the outbox's size: joined to kept instead, a
       -- plan made on an empty outbox hashes the whole table (knex.ts, genericPlans).
       DELETE FROM event_outbox o USING async_commit
        WHERE o.event_id = ANY (ARRAY(SELECT id FROM kept))
    RETURNING o.event_id
     ), made AS (
       INSERT INTO webhook_deliveries
              (id, tenant_id, event_id, subscription_id, receptionist_id, next_attempt_at,
               status, locked_until, claims)
       SELECT ${newTimeOrderedIdSql('dlv', 'kept.k')}, kept.tenant_id, g.event_id, g.subscription_id,
              g.receptionist_id, now(), 'delivering',
              now() + make_interval(secs => $7::float8), 1
         FROM taken t JOIN kept ON kept.id = t.event_id JOIN targets g ON g.event_id = t.event_id
       ON CONFLICT DO NOTHING
    RETURNING ${DELIVERY_COLUMNS}
     ), counts AS (
       SELECT (SELECT count(*)::int FROM taken) AS relayed,
              (SELECT tenant_id FROM kept WHERE k = 1
                ORDER BY ${TURN_ORDER('tenant_id', ' DESC')} LIMIT 1) AS next_tenant
     )
     SELECT d.*, (SELECT ${EVENT_JSON} FROM ev e WHERE e.id = d.event_id) AS event,
            ${SUBSCRIPTION_JSON} AS subscription, counts.relayed, counts.next_tenant
       FROM counts LEFT JOIN (made d JOIN kept ON kept.id = d.event_id) ON true
      ORDER BY kept.k, ${TURN_ORDER('d.tenant_id')}`;
