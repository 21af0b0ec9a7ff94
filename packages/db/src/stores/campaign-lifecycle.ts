import type { Knex } from 'knex';
import { newId } from '../ids';
import { whereVersion, type VersionCondition } from '../versions';
import {
  CAMPAIGN_COLUMNS,
  campaignColumnList,
  toCampaign,
  type Campaign,
  type CampaignRow,
} from './campaign-rows';
import { pickedRecipients, type RecipientSource } from './campaign-recipients-sql';

export type { RecipientSource } from './campaign-recipients-sql';

export interface NewCampaign {
  tenantId: string;
  receptionistId: string;
  name: string;
  message: string;
  sendRatePerMinute: number;
  allowRepeat: boolean;
  idempotency: { key: string; fingerprint: string } | null;
  /** false: made with a test-mode key (default: live). */
  livemode?: boolean;
}

/** What the recipients insert stored: enough to check the rendered message's length. */
export interface RecipientsAdded {
  count: number;
  /** Code points of the longest name among them (0 when none has a name). */
  longestName: number;
  /** Recipients without a name (`{{name}}` is removed for them). */
  nameless: number;
}

/** A recipient the caller now holds: its message is to be made (`sending`) or it is skipped. */
export interface ClaimedRecipient {
  campaignId: string;
  seq: number;
  phone: string;
  name: string | null;
  /** `opted_out`: the number opted out of the tenant; no message, counted at once. */
  state: 'sending' | 'opted_out';
  /** The id the recipient's message must be stored under (null when opted out). */
  smsId: string | null;
  tenantId: string;
  receptionistId: string;
  /** The campaign's message, `{{name}}` not yet rendered. */
  message: string;
  /** The campaign's `allow_repeat`. */
  allowRepeat: boolean;
  /** The campaign's mode: its message is of that mode. */
  livemode: boolean;
}

/** How a recipient ended, as the counters see it. */
export type RecipientOutcome = 'sent' | 'failed' | 'opted_out' | 'skipped';

/** A message of a campaign whose outcome is known but not yet applied to its recipient. */
export interface UnsettledMessage {
  smsId: string;
  status: 'sent' | 'failed';
  errorCode: string | null;
}

/**
 * A final SMS as a recipient outcome: `sent`, or `opted_out` when the SMS path refused it
 * because the number opted out after the campaign claimed it, else `failed`
 * (carrier_rejected, provider_error, send_interrupted).
 */
export const recipientOutcome = (status: 'sent' | 'failed', errorCode: string | null) =>
  status === 'sent' ? 'sent' : errorCode === 'recipient_opted_out' ? 'opted_out' : 'failed';

const OPTED_OUT = `EXISTS (SELECT 1 FROM sms_opt_outs o
  WHERE o.tenant_id = c.tenant_id AND o.phone = r.phone AND o.opted_out)`;

const increments = (outcome: RecipientOutcome) => [
  outcome === 'sent' ? 1 : 0,
  outcome === 'failed' ? 1 : 0,
  outcome === 'opted_out' ? 1 : 0,
  outcome === 'skipped' ? 1 : 0,
];

/**
 * The campaign lifecycle, one statement per transition (each takes the caller's transaction
 * first; the caller emits `campaign.completed` in the transaction of `complete`):
 *
 *   accept → queued ──start──▶ running ──complete──▶ completed   (campaign.completed)
 *              └─────────────────┴──cancel──▶ canceled            (nothing)
 *   recipient: pending ──claim──▶ sending (its SMS stored in the same transaction)
 *                         │          └──settle (the SMS's outcome)──▶ sent | failed | opted_out
 *                         ├──claim (opted out)──▶ opted_out
 *                         └──cancel──▶ canceled
 *
 * Invariants: a recipient leaves `pending` once, by a claim that also stores its only
 * message, so no crash or second worker ever makes two; claims take only recipients of a
 * `running` campaign, so nothing is claimed once a cancel has committed; each outcome
 * increments one counter once (the `sending` → final update is conditional); a campaign is
 * completed by the one conditional update that finds it running with every recipient
 * counted, so `campaign.completed` is emitted exactly once.
 */
export class CampaignLifecycle {
  /**
   * Inserts a queued campaign without recipients. Undefined when its Idempotency-Key is held
   * (the conflict waits for the holder to commit, so the holder is then visible).
   */
  async insert(db: Knex, input: NewCampaign): Promise<Campaign | undefined> {
    const [row] = (await db('campaigns')
      .insert({
        id: newId('cmp'),
        tenant_id: input.tenantId,
        receptionist_id: input.receptionistId,
        name: input.name,
        message: input.message,
        status: 'queued',
        send_rate_per_minute: input.sendRatePerMinute,
        allow_repeat: input.allowRepeat,
        recipients: 0,
        idempotency_key: input.idempotency?.key ?? null,
        idempotency_fingerprint: input.idempotency?.fingerprint ?? null,
        livemode: input.livemode ?? true,
      })
      .onConflict(db.raw('(tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL'))
      .ignore()
      .returning([...CAMPAIGN_COLUMNS])) as CampaignRow[];
    return row && toCampaign(row);
  }

  /** The first of `leadIds` that is not one of the tenant's leads of mode `livemode`, or null. */
  async firstUnknownLead(
    db: Knex,
    tenantId: string,
    livemode: boolean,
    leadIds: readonly string[],
  ): Promise<string | null> {
    const result = (await db.raw(
      `SELECT x.id FROM json_array_elements_text(?::json) WITH ORDINALITY AS x(id, ord)
        WHERE NOT EXISTS (SELECT 1 FROM leads l
                           WHERE l.id = x.id AND l.tenant_id = ? AND l.livemode = ?)
        ORDER BY x.ord LIMIT 1`,
      [JSON.stringify(leadIds), tenantId, livemode],
    )) as { rows: Array<{ id: string }> };
    return result.rows[0]?.id ?? null;
  }

  /**
   * Expands `source` into one row per distinct recipient (the list is expanded once, here)
   * and records their number on the campaign, in one statement. A lead filter stops after
   * `cap` matches, so a count of `cap` may mean more: pass the limit plus one.
   */
  async addRecipients(
    db: Knex,
    campaign: Campaign,
    source: RecipientSource,
    cap: number,
  ): Promise<RecipientsAdded> {
    const picked = pickedRecipients(campaign.tenantId, campaign.livemode, source, cap);
    const result = (await db.raw(
      `WITH picked AS (${picked.sql}),
       ins AS (
         INSERT INTO campaign_recipients (campaign_id, seq, phone, name, lead_id)
         SELECT ?, row_number() OVER (ORDER BY ord), phone, name, lead_id FROM picked
         ON CONFLICT DO NOTHING
         RETURNING name
       ),
       stats AS (
         SELECT count(*)::int AS n, coalesce(max(char_length(name)), 0)::int AS longest,
                (count(*) FILTER (WHERE name IS NULL))::int AS nameless
           FROM ins
       )
       UPDATE campaigns c SET recipients = stats.n FROM stats WHERE c.id = ?
       RETURNING stats.n, stats.longest, stats.nameless`,
      [...picked.bindings, campaign.id, campaign.id],
    )) as { rows: Array<{ n: number; longest: number; nameless: number }> };
    const row = result.rows[0];
    if (!row) throw new Error(`campaign ${campaign.id} vanished inside its transaction`);
    return { count: row.n, longestName: row.longest, nameless: row.nameless };
  }

  /** queued → running. Undefined when the campaign is gone or not queued (started already). */
  async start(db: Knex, id: string): Promise<Campaign | undefined> {
    const [row] = (await db('campaigns')
      .where({ id, status: 'queued' })
      .update({ status: 'running', started_at: db.fn.now(), updated_at: db.fn.now() })
      .returning([...CAMPAIGN_COLUMNS])) as CampaignRow[];
    return row && toCampaign(row);
  }

  /**
   * Claims the next pending recipient of a running campaign: `sending` under a new message
   * id, or `opted_out` when its number opted out of the tenant. Concurrent claimers skip
   * each other's rows (SKIP LOCKED). Undefined when the campaign is not running or has no
   * pending recipient left. Store the message in the same transaction, committed durably.
   */
  async claimNext(db: Knex, campaignId: string): Promise<ClaimedRecipient | undefined> {
    const result = (await db.raw(
      `WITH next AS (
         SELECT r.seq FROM campaign_recipients r
           JOIN campaigns c ON c.id = r.campaign_id AND c.status = 'running'
          WHERE r.campaign_id = ? AND r.state = 'pending'
          ORDER BY r.seq LIMIT 1
          FOR UPDATE OF r SKIP LOCKED
       )
       UPDATE campaign_recipients r
          SET state = CASE WHEN ${OPTED_OUT} THEN 'opted_out' ELSE 'sending' END,
              sms_id = CASE WHEN ${OPTED_OUT} THEN NULL ELSE ? END,
              updated_at = now()
         FROM next, campaigns c
        WHERE r.campaign_id = ? AND r.seq = next.seq AND c.id = r.campaign_id
       RETURNING r.seq, r.phone, r.name, r.state, r.sms_id, c.tenant_id, c.receptionist_id,
                 c.message, c.allow_repeat, c.livemode`,
      [campaignId, newId('sms'), campaignId],
    )) as {
      rows: Array<{
        seq: number;
        phone: string;
        name: string | null;
        state: 'sending' | 'opted_out';
        sms_id: string | null;
        tenant_id: string;
        receptionist_id: string;
        message: string;
        allow_repeat: boolean;
        livemode: boolean;
      }>;
    };
    const r = result.rows[0];
    return (
      r && {
        campaignId,
        seq: r.seq,
        phone: r.phone,
        name: r.name,
        state: r.state,
        smsId: r.sms_id,
        tenantId: r.tenant_id,
        receptionistId: r.receptionist_id,
        message: r.message,
        allowRepeat: r.allow_repeat,
        livemode: r.livemode,
      }
    );
  }

  /**
   * Records that a campaign texts `claim.phone` now, unless a campaign of the tenant did within
   * `windowMs` (and the claim's campaign does not allow repeats): false then, and nothing changes.
   * Contacts are kept per mode: a test campaign's text never holds back a live one (docs/API.md,
   * Test mode). One upsert in the message's transaction: a concurrent one for the same number
   * waits on the row and then sees it moved, so two campaigns never both win.
   */
  async recordContact(db: Knex, claim: ClaimedRecipient, windowMs: number): Promise<boolean> {
    const result = (await db.raw(
      `INSERT INTO campaign_contacts AS cc (tenant_id, livemode, phone, last_sent_at)
       VALUES (?, ?, ?, now())
       ON CONFLICT (tenant_id, livemode, phone) DO UPDATE SET last_sent_at = now()
        WHERE ? OR cc.last_sent_at <= now() - make_interval(secs => ?)
       RETURNING 1`,
      [claim.tenantId, claim.livemode, claim.phone, claim.allowRepeat, windowMs / 1000],
    )) as { rows: unknown[] };
    return result.rows.length === 1;
  }

  /** sending → opted_out | failed for a claimed recipient whose message the SMS path refused. */
  async resolveUnsent(
    db: Knex,
    claim: ClaimedRecipient,
    outcome: 'opted_out' | 'failed' | 'skipped',
  ) {
    await db('campaign_recipients')
      .where({ campaign_id: claim.campaignId, seq: claim.seq, state: 'sending' })
      .update({ state: outcome, sms_id: null, updated_at: db.fn.now() });
  }

  /**
   * Counts one outcome on the campaign. `done`: the campaign is running and every recipient
   * is now counted, so the caller should `complete` it in the same transaction.
   */
  async tally(db: Knex, campaignId: string, outcome: RecipientOutcome): Promise<boolean> {
    const result = (await db.raw(
      `UPDATE campaigns SET sent = sent + ?, failed = failed + ?, opted_out = opted_out + ?,
              skipped = skipped + ?, updated_at = now()
        WHERE id = ?
       RETURNING (status = 'running' AND sent + failed + opted_out + skipped >= recipients)
                 AS done`,
      [...increments(outcome), campaignId],
    )) as { rows: Array<{ done: boolean }> };
    return result.rows[0]?.done ?? false;
  }

  /**
   * sending → the outcome of the recipient's message, and its counter, in one statement.
   * Nothing when the message is not a campaign's or its outcome was applied already.
   */
  async settle(
    db: Knex,
    smsId: string,
    outcome: RecipientOutcome,
  ): Promise<{ campaignId: string; done: boolean } | undefined> {
    const result = (await db.raw(
      `WITH r AS (
         UPDATE campaign_recipients SET state = ?, updated_at = now()
          WHERE sms_id = ? AND state = 'sending'
         RETURNING campaign_id
       )
       UPDATE campaigns c
          SET sent = c.sent + ?, failed = c.failed + ?, opted_out = c.opted_out + ?,
              skipped = c.skipped + ?, updated_at = now()
         FROM r
        WHERE c.id = r.campaign_id
       RETURNING c.id,
                 (c.status = 'running'
                  AND c.sent + c.failed + c.opted_out + c.skipped >= c.recipients) AS done`,
      [outcome, smsId, ...increments(outcome)],
    )) as { rows: Array<{ id: string; done: boolean }> };
    const row = result.rows[0];
    return row && { campaignId: row.id, done: row.done };
  }

  /**
   * running → completed, only while every recipient is counted. Only one transaction can
   * ever win this update for a campaign: the caller emits `campaign.completed` with it.
   */
  async complete(db: Knex, campaignId: string): Promise<Campaign | undefined> {
    const result = (await db.raw(
      `UPDATE campaigns SET status = 'completed', completed_at = now(), updated_at = now()
        WHERE id = ? AND status = 'running' AND sent + failed + opted_out + skipped >= recipients
       RETURNING ${campaignColumnList()}`,
      [campaignId],
    )) as { rows: CampaignRow[] };
    return result.rows[0] && toCampaign(result.rows[0]);
  }

  /**
   * queued | running → canceled, and every pending recipient → canceled; counts one more
   * version. Messages already stored (claimed before this commits) still travel the SMS path
   * and are counted. Undefined when the tenant has no such campaign (of mode `livemode`,
   * when given) in one of those states with a version `condition` accepts.
   */
  async cancel(
    db: Knex,
    tenantId: string,
    id: string,
    condition: VersionCondition = null,
    livemode?: boolean,
  ): Promise<Campaign | undefined> {
    const mine = db('campaigns').where({ tenant_id: tenantId, id });
    if (livemode !== undefined) mine.andWhere('livemode', livemode);
    const [row] = (await whereVersion(mine.whereIn('status', ['queued', 'running']), condition)
      .update({
        status: 'canceled',
        canceled_at: db.fn.now(),
        updated_at: db.fn.now(),
        version: db.raw('version + 1'),
      })
      .returning([...CAMPAIGN_COLUMNS])) as CampaignRow[];
    if (!row) return undefined;
    await db('campaign_recipients')
      .where({ campaign_id: id, state: 'pending' })
      .update({ state: 'canceled', updated_at: db.fn.now() });
    return toCampaign(row);
  }

  /** Running campaigns whose recipients are all counted but which are not completed. */
  async finishedIds(db: Knex, limit: number): Promise<string[]> {
    const rows = (await db('campaigns')
      .select('id')
      .where('status', 'running')
      .whereRaw('sent + failed + opted_out + skipped >= recipients')
      .limit(limit)) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  /**
   * Messages of campaigns that reached an outcome their recipient does not show, looked at
   * once they are `graceMs` old: a repair path only (the SMS path settles a recipient in the
   * transaction that records its message's outcome).
   */
  async unsettled(db: Knex, graceMs: number, limit: number): Promise<UnsettledMessage[]> {
    const result = (await db.raw(
      `SELECT s.id, s.status, s.error_code
         FROM campaign_recipients r JOIN sms_messages s ON s.id = r.sms_id
        WHERE r.state = 'sending' AND r.updated_at < now() - make_interval(secs => ?)
          AND s.status IN ('sent', 'failed')
        ORDER BY r.updated_at LIMIT ?`,
      [graceMs / 1000, limit],
    )) as { rows: Array<{ id: string; status: 'sent' | 'failed'; error_code: string | null }> };
    return result.rows.map((r) => ({ smsId: r.id, status: r.status, errorCode: r.error_code }));
  }
}
