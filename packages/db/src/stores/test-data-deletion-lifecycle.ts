import type { Knex } from 'knex';
import { newId } from '../ids';
import { FINAL_CALL_STATUSES } from './call-types';
import { idsOlderThan } from './older-than';

const TABLE = 'test_data_deletions';

/** A request to wipe a tenant's test-mode data (docs/API.md, Test mode). */
export interface TestDataDeletion {
  id: string;
  tenantId: string;
  status: 'running' | 'completed';
  createdAt: Date;
  completedAt: Date | null;
}

/** What one wipe removed. */
export interface TestDataWiped {
  calls: number;
  events: number;
  deliveries: number;
  sms: number;
  leads: number;
  campaigns: number;
}

/** SMS still in motion (the sender may hold its claim): kept, as calls on the phone are. */
const SMS_IN_MOTION = ['queued', 'sending'];
/** Campaigns still sending: kept with their messages (their outcomes settle recipients). */
const OPEN_CAMPAIGNS = ['queued', 'running'];
/** Imports still reading their file: kept (their next batch needs the row). */
const OPEN_IMPORTS = ['uploading', 'processing'];

interface DeletionRow {
  id: string;
  tenant_id: string;
  status: 'running' | 'completed';
  created_at: Date;
  completed_at: Date | null;
}

const toDeletion = (r: DeletionRow): TestDataDeletion => ({
  id: r.id,
  tenantId: r.tenant_id,
  status: r.status,
  createdAt: r.created_at,
  completedAt: r.completed_at,
});

/**
 * The wipe of a tenant's test-mode data (`test_data_deletions.status`), one statement per
 * transition:
 *
 *   request ─▶ running ──complete (the worker, with the wipe, in one transaction)──▶ completed
 *
 * The request row is committed before DELETE /test-data answers 202, so no crash loses an accepted
 * request: the worker's reconciler re-adds the job of a row left running. A wipe removes what was
 * test data when the request was made: the tenant's test-mode events dated up to then with their
 * deliveries, its test-mode calls that had ended by then, its test-mode SMS, leads (with their
 * imports), campaigns (with their recipients) and campaign contacts. What is still in motion is
 * kept, and the next wipe takes it: a call on the phone (its reports would otherwise make it
 * again, as a live call), a message queued or with the sender, a campaign still sending and its
 * messages (their outcomes settle its recipients), an import still reading its file. Keys,
 * receptionists and test-mode subscriptions are configuration, not data: they stay, and the
 * subscriptions receive `test_data.deleted`.
 */
export class TestDataDeletionLifecycle {
  constructor(private readonly db: Knex) {}

  /** → running: the accepted request. */
  async request(tenantId: string): Promise<TestDataDeletion> {
    const [row] = (await this.db(TABLE)
      .insert({ id: newId('tdd'), tenant_id: tenantId })
      .returning('*')) as DeletionRow[];
    return toDeletion(row as DeletionRow);
  }

  async get(db: Knex, id: string): Promise<TestDataDeletion | undefined> {
    const row = (await db(TABLE).where({ id }).first()) as DeletionRow | undefined;
    return row && toDeletion(row);
  }

  /** The deletion `id`, locked for the rest of the transaction, if it is still running. */
  async lockRunning(trx: Knex, id: string): Promise<TestDataDeletion | undefined> {
    const row = (await trx(TABLE).where({ id, status: 'running' }).forUpdate().first()) as
      DeletionRow | undefined;
    return row && toDeletion(row);
  }

  /**
   * Removes the test-mode data of the deletion's tenant as it was at its request, in the
   * caller's transaction (the one that completes it).
   */
  async wipe(trx: Knex, d: TestDataDeletion): Promise<TestDataWiped> {
    const { rows } = (await trx.raw(
      `WITH test_events AS (
         SELECT id FROM events
          WHERE tenant_id = ? AND NOT livemode AND created_at <= ?
       ), deliveries AS (
         DELETE FROM webhook_deliveries d USING test_events e
          WHERE d.event_id = e.id AND d.tenant_id = ?
      RETURNING 1
       ), outbox AS (
         DELETE FROM event_outbox o USING test_events e WHERE o.event_id = e.id RETURNING 1
       ), events_gone AS (
         DELETE FROM events ev USING test_events e
          WHERE ev.id = e.id AND ev.tenant_id = ? AND NOT ev.livemode AND ev.created_at <= ?
      RETURNING 1
       ), calls_gone AS (
         DELETE FROM calls
          WHERE tenant_id = ? AND NOT livemode AND created_at <= ? AND status = ANY (?::text[])
      RETURNING 1
       ), open_campaigns AS (
         SELECT id FROM campaigns
          WHERE tenant_id = ? AND NOT livemode AND status = ANY (?::text[])
       ), sms_gone AS (
         -- By the tenant's receptionists: the messages' own index (sms_receptionist_order_idx).
         DELETE FROM sms_messages s
          WHERE s.receptionist_id IN (SELECT id FROM receptionists WHERE tenant_id = ?)
            AND s.tenant_id = ? AND NOT s.livemode AND s.created_at <= ?
            AND NOT (s.status = ANY (?::text[]))
            AND (s.campaign_id IS NULL OR s.campaign_id NOT IN (SELECT id FROM open_campaigns))
      RETURNING 1
       ), campaigns_gone AS (
         DELETE FROM campaigns
          WHERE tenant_id = ? AND NOT livemode AND created_at <= ?
            AND NOT (status = ANY (?::text[]))
      RETURNING 1
       ), contacts_gone AS (
         DELETE FROM campaign_contacts
          WHERE tenant_id = ? AND NOT livemode AND last_sent_at <= ?
      RETURNING 1
       ), leads_gone AS (
         DELETE FROM leads WHERE tenant_id = ? AND NOT livemode AND created_at <= ?
      RETURNING 1
       ), imports_gone AS (
         DELETE FROM lead_imports
          WHERE tenant_id = ? AND NOT livemode AND created_at <= ?
            AND NOT (status = ANY (?::text[]))
      RETURNING 1
       )
       SELECT (SELECT count(*)::int FROM calls_gone) AS calls,
              (SELECT count(*)::int FROM events_gone) AS events,
              (SELECT count(*)::int FROM deliveries) AS deliveries,
              (SELECT count(*)::int FROM sms_gone) AS sms,
              (SELECT count(*)::int FROM leads_gone) AS leads,
              (SELECT count(*)::int FROM campaigns_gone) AS campaigns,
              -- Every data-modifying CTE runs; these two are not reported.
              (SELECT count(*) FROM contacts_gone) + (SELECT count(*) FROM imports_gone) AS rest`,
      [
        d.tenantId,
        d.createdAt,
        d.tenantId,
        d.tenantId,
        d.createdAt,
        d.tenantId,
        d.createdAt,
        [...FINAL_CALL_STATUSES],
        d.tenantId,
        OPEN_CAMPAIGNS,
        d.tenantId,
        d.tenantId,
        d.createdAt,
        SMS_IN_MOTION,
        d.tenantId,
        d.createdAt,
        OPEN_CAMPAIGNS,
        d.tenantId,
        d.createdAt,
        d.tenantId,
        d.createdAt,
        d.tenantId,
        d.createdAt,
        OPEN_IMPORTS,
      ],
    )) as { rows: TestDataWiped[] };
    const r = rows[0];
    return {
      calls: r?.calls ?? 0,
      events: r?.events ?? 0,
      deliveries: r?.deliveries ?? 0,
      sms: r?.sms ?? 0,
      leads: r?.leads ?? 0,
      campaigns: r?.campaigns ?? 0,
    };
  }

  /** running → completed, in the wipe's transaction. */
  async complete(trx: Knex, id: string): Promise<Date> {
    const [row] = (await trx(TABLE)
      .where({ id, status: 'running' })
      .update({ status: 'completed', completed_at: trx.fn.now() })
      .returning('completed_at')) as Array<{ completed_at: Date }>;
    return row?.completed_at ?? new Date();
  }

  /** Deletions still running `graceMs` after they were requested, oldest first. */
  async stalled(graceMs: number, limit: number): Promise<string[]> {
    return idsOlderThan(
      this.db,
      this.db(TABLE).where({ status: 'running' }),
      'created_at',
      graceMs,
      limit,
    );
  }
}
