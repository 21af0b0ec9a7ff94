import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

const TABLE = 'event_streams';

/** What opening a stream came to: its lease's id, or the key's limit reached. */
export type StreamOpening = { kind: 'opened'; id: string } | { kind: 'limit'; open: number };

/**
 * Leases of open event streams (migration 106): the per-key limit across every API process,
 * and the tenants whose events notify the streams' channel. A lease is renewed by its
 * process while its stream is open (renew) and deleted when the stream ends (close); a
 * process that dies leaves leases that lapse at `expires_at` and are no longer counted.
 */
export class EventStreamsStore {
  constructor(private readonly db: Knex) {}

  /**
   * Opens a lease for a stream of `keyId` unless the key has `limit` live ones already.
   * Openings of one key take turns (a transaction-scoped advisory lock on the key), so two
   * at once cannot both take the last place; the key's lapsed leases are deleted on the way.
   */
  async open(
    tenantId: string,
    keyId: string,
    limit: number,
    ttlMs: number,
  ): Promise<StreamOpening> {
    return this.db.transaction(async (trx) => {
      await trx.raw(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, [
        `event_streams:${keyId}`,
      ]);
      await trx(TABLE).where('key_id', keyId).andWhere('expires_at', '<=', trx.fn.now()).delete();
      const [{ open }] = (await trx(TABLE)
        .where('key_id', keyId)
        .count<{ open: string }[]>({ open: '*' })) as [{ open: string }];
      if (Number(open) >= limit) return { kind: 'limit', open: Number(open) };
      const id = randomUUID();
      await trx(TABLE).insert({
        id,
        tenant_id: tenantId,
        key_id: keyId,
        expires_at: trx.raw(`now() + make_interval(secs => ?)`, [ttlMs / 1000]),
      });
      return { kind: 'opened', id };
    });
  }

  /**
   * Extends the leases of `streams` to `ttlMs` from now (writing again any that lapsed and
   * was deleted meanwhile); returns the ids of those that must end: their API key was
   * revoked (or deleted) since the stream opened.
   */
  async renew(
    streams: ReadonlyArray<{ id: string; tenantId: string; keyId: string }>,
    ttlMs: number,
  ): Promise<string[]> {
    if (streams.length === 0) return [];
    const { rows } = (await this.db.raw(
      `WITH x AS (
         SELECT x.*, (SELECT k.revoked_at IS NULL FROM api_keys k WHERE k.id = x.key_id) AS active
           FROM json_to_recordset(?::json) AS x(id text, tenant_id text, key_id text)
       ), renewed AS (
         -- A data-modifying CTE runs whether or not the query reads it.
         INSERT INTO ${TABLE} (id, tenant_id, key_id, expires_at)
         SELECT id, tenant_id, key_id, now() + make_interval(secs => ?) FROM x WHERE active
         ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at
         RETURNING 1
       )
       SELECT id FROM x WHERE active IS NOT TRUE`,
      [
        JSON.stringify(streams.map((s) => ({ id: s.id, tenant_id: s.tenantId, key_id: s.keyId }))),
        ttlMs / 1000,
      ],
    )) as { rows: Array<{ id: string }> };
    return rows.map((r) => r.id);
  }

  async close(id: string): Promise<void> {
    await this.db(TABLE).where({ id }).delete();
  }
}
