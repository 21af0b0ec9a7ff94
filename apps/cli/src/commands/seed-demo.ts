import { randomInt } from 'node:crypto';
import { billingPeriodOf, type Receptionist, type Tenant } from '@switchboard/db';
import { answeredCall, fictionalPhoneNumber, missedCall } from '@switchboard/simulation';
import { applyTelephonyMessage } from '@switchboard/telephony';
import { UsageError } from '../args';
import type { CliContext } from '../context';
import { renderReceptionist, renderTenant } from '../render';
import { createReadyReceptionist } from './provision';

export const DEMO_TENANT_NAME = 'Demo Plumbing & Heating';
const DEMO_RECEPTIONISTS = ['Front Desk', 'After Hours', 'Emergency Line'];
const CALLS_PER_RECEPTIONIST = 24;
const WEEK_MS = 7 * 86_400_000;

/**
 * A week of calls per receptionist, played through telephony ingestion (the same path real
 * calls take), so the demo's history, details and outbox events are those of real calls.
 */
async function seedCalls(ctx: CliContext, r: Receptionist): Promise<number> {
  const now = Date.now();
  for (let i = 0; i < CALLS_PER_RECEPTIONIST; i++) {
    const input = {
      receptionistId: r.id,
      receptionistName: r.name,
      direction: randomInt(10) < 3 ? ('outbound' as const) : ('inbound' as const),
      businessPhone: r.phoneNumber as string,
      customerPhone: fictionalPhoneNumber(),
      startedAt: new Date(now - randomInt(WEEK_MS)),
    };
    if (input.direction === 'inbound' && randomInt(100) < 15) {
      const call = missedCall(input);
      await applyTelephonyMessage(ctx, call.started);
      await applyTelephonyMessage(ctx, call.missed);
    } else {
      const call = answeredCall(input);
      await applyTelephonyMessage(ctx, call.started);
      await applyTelephonyMessage(ctx, call.ended);
    }
  }
  return CALLS_PER_RECEPTIONIST;
}

/**
 * Sizes the demo plan so that this month's seeded minutes sit just under 80 % of it: the
 * next completed call of a minute or more (`npm run demo:call`) reaches 80 % and fires
 * `usage.threshold`. The smallest plan P with used < 0.8 P, so 0.8 P <= used + 1.
 */
async function sizePlanNearThreshold(ctx: CliContext, tenant: Tenant): Promise<Tenant> {
  const usage = await ctx.stores.usage.get(tenant.id, billingPeriodOf(new Date()));
  const used = usage?.minutesUsed ?? 0;
  const plan = Math.floor((used * 100) / 80) + 1;
  return (await ctx.stores.tenants.setPlanMinutes(tenant.id, plan)) ?? tenant;
}

/**
 * Creates the demo tenant with receptionists the first time; later runs reuse it. Every
 * run mints a fresh admin key, because a key is only ever shown when it is created.
 */
export async function seedDemo(ctx: CliContext, progress: (line: string) => void): Promise<object> {
  let tenant = await ctx.stores.tenants.findByName(DEMO_TENANT_NAME);
  const created = !tenant;
  if (!tenant) {
    tenant = await ctx.stores.tenants.create({ name: DEMO_TENANT_NAME, planMinutes: 2000 });
    progress(`creating demo tenant ${tenant.id}`);
    for (const name of DEMO_RECEPTIONISTS) {
      const receptionist = await createReadyReceptionist(ctx, tenant.id, name);
      const calls = await seedCalls(ctx, receptionist);
      progress(`  ${name}: ${receptionist.phoneNumber}, ${calls} calls`);
    }
    tenant = await sizePlanNearThreshold(ctx, tenant);
    progress(
      `  plan: ${tenant.planMinutes} minutes, just over this month's usage: the next call ` +
        'crosses 80 % and fires usage.threshold',
    );
  } else {
    progress(`demo tenant ${tenant.id} already exists; minting a new admin key`);
  }
  const receptionists = await ctx.stores.receptionists.listAllForTenant(tenant.id);
  const { apiKey, key } = await ctx.stores.apiKeys.create({
    tenantId: tenant.id,
    scopes: ['admin'],
    name: 'demo admin',
  });
  return {
    created,
    tenant: renderTenant(tenant),
    api_key: { id: apiKey.id, key, scopes: apiKey.scopes },
    receptionists: receptionists.map(renderReceptionist),
  };
}

/** `seed-demo`: progress lines on stderr, the tenant, key and receptionists as JSON. */
export async function seedDemoCommand(ctx: CliContext, argv: string[]): Promise<object> {
  if (argv.length) throw new UsageError('seed-demo takes no options');
  return seedDemo(ctx, (line) => process.stderr.write(`switchboard: ${line}\n`));
}
