/**
 * `select` from a delivery's event (alias `e`), for a delivery aliased `d`. Events are
 * partitioned by day and a delivery does not carry its event's `created_at`, so a lookup by
 * id alone probes every day kept. An event is committed before its deliveries are made
 * (the outbox relays committed events), so it almost always lies within a day before its
 * delivery: that window is looked in first, pruning the other days at run time; the lookup
 * by id alone runs only when the window holds nothing (a fan-out delayed over a day, or an
 * application clock ahead of Postgres' by over an hour).
 */
export const eventOfDelivery = (select: string, d = 'd'): string => `coalesce(
  (SELECT ${select} FROM events e WHERE e.id = ${d}.event_id
      AND e.created_at BETWEEN ${d}.created_at - interval '1 day'
                           AND ${d}.created_at + interval '1 hour'),
  (SELECT ${select} FROM events e WHERE e.id = ${d}.event_id))`;
