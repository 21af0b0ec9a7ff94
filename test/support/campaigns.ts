import request from 'supertest';
import type { TestContext } from './context';
import { messages } from './fixtures';

/** The phone of recipient `i` of a test campaign; every `rejectEvery`-th one ends in 0003. */
export function campaignPhone(i: number, rejectEvery = 0): string {
  const exchange = String(300 + Math.floor(i / 10)).padStart(3, '0');
  const line = rejectEvery > 0 && i % rejectEvery === 0 ? '0003' : String(5000 + i);
  return `+1415${exchange}${line}`;
}

/** Leads with a name and a phone each, for `lead_ids` and `lead_filter` campaigns. */
export async function insertCampaignLeads(
  ctx: TestContext,
  tenantId: string,
  phones: readonly string[],
  tag: string,
): Promise<string[]> {
  const leads = await ctx.deps.stores.leads.insertMany(
    ctx.deps.knex,
    phones.map((phone, i) => ({
      tenantId,
      source: 'api' as const,
      fields: { name: `Customer ${i}`, phone, tags: [tag] },
    })),
  );
  return leads.map((l) => l.id);
}

/** Opts `phones` out of the tenant's SMS the way a customer does: by texting STOP. */
export async function optOut(
  ctx: TestContext,
  receptionistId: string,
  receptionistPhone: string,
  phones: readonly string[],
): Promise<void> {
  for (const phone of phones) {
    const res = await request(ctx.app)
      .post('/internal/v1/telephony/events')
      .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
      .send(messages.smsInbound(receptionistId, receptionistPhone, 'STOP', { from: phone }));
    if (res.status !== 202) throw new Error(`STOP not ingested: ${res.status}`);
  }
}

/** Outbound SMS rows of a campaign (the messages it made). */
export async function campaignMessages(ctx: TestContext, campaignId: string) {
  return (await ctx.deps
    .knex('sms_messages')
    .where({ campaign_id: campaignId })
    .orderBy('created_at')
    .select('id', 'to_number', 'message', 'status', 'error_code', 'created_at')) as Array<{
    id: string;
    to_number: string;
    message: string;
    status: string;
    error_code: string | null;
    created_at: Date;
  }>;
}

/** Recipient states of a campaign, counted. */
export async function recipientStates(
  ctx: TestContext,
  campaignId: string,
): Promise<Record<string, number>> {
  const rows = (await ctx.deps
    .knex('campaign_recipients')
    .where({ campaign_id: campaignId })
    .select('state')
    .count({ n: '*' })
    .groupBy('state')) as Array<{ state: string; n: string }>;
  return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
}
