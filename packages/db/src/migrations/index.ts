import type { Knex } from 'knex';
import * as m001 from './001_foundation';
import * as m002 from './002_calls';
import * as m003 from './003_webhooks';
import * as m004 from './004_deliveries';
import * as m005 from './005_outbound_idempotency';
import * as m007 from './007_worker_hardening';
import * as m008 from './008_provisioning_usage';
import * as m009 from './009_sms';
import * as m010 from './010_leads';
import * as m011 from './011_campaigns';
import * as m012 from './012_rate_limits';
import * as m013 from './013_lapsed_claims';
import * as m016 from './016_lead_prefix_search';
import * as m017 from './017_campaign_recipient_limits';
import * as m020 from './020_partitioning';
import * as m021 from './021_retention';
import * as m030 from './030_webhook_self_service';
import * as m040 from './040_sms_receipts';
import * as m050 from './050_event_traceparent';
import * as m060 from './060_portal';
import * as m070 from './070_fair_relay';
import * as m081 from './081_pending_floors';
import * as m090 from './090_delivery_keys';
import * as m095 from './095_delivery_uniqueness_without_locks';
import * as m096 from './096_latest_attempt_on_delivery';
import * as m097 from './097_uniqueness_bounded_above';
import * as m098 from './098_event_outbox';
import * as m100 from './100_portal_session_creator';
import * as m101 from './101_resource_versions';
import * as m105 from './105_event_log';
import * as m106 from './106_event_streams';
import * as m107 from './107_test_mode';
import * as m108 from './108_test_mode_sms_leads_campaigns';
import * as m109 from './109_relay_rows_skip_uniqueness_lookup';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
  /** `{ transaction: false }`: the migration commits its own steps (an online migration). */
  config?: { transaction: boolean };
}

/**
 * Every migration, in order. Names are stored in knex_migrations: never rename one; add a
 * new file and append it here.
 */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['001_foundation', m001],
  ['002_calls', m002],
  ['003_webhooks', m003],
  ['004_deliveries', m004],
  ['005_outbound_idempotency', m005],
  ['007_worker_hardening', m007],
  ['008_provisioning_usage', m008],
  ['009_sms', m009],
  ['010_leads', m010],
  ['011_campaigns', m011],
  ['012_rate_limits', m012],
  ['013_lapsed_claims', m013],
  ['016_lead_prefix_search', m016],
  ['017_campaign_recipient_limits', m017],
  ['020_partitioning', m020],
  ['021_retention', m021],
  ['030_webhook_self_service', m030],
  ['040_sms_receipts', m040],
  ['050_event_traceparent', m050],
  ['060_portal', m060],
  ['070_fair_relay', m070],
  ['081_pending_floors', m081],
  ['090_delivery_keys', m090],
  ['095_delivery_uniqueness_without_locks', m095],
  ['096_latest_attempt_on_delivery', m096],
  ['097_uniqueness_bounded_above', m097],
  ['098_event_outbox', m098],
  ['100_portal_session_creator', m100],
  ['101_resource_versions', m101],
  ['105_event_log', m105],
  ['106_event_streams', m106],
  ['107_test_mode', m107],
  ['108_test_mode_sms_leads_campaigns', m108],
  ['109_relay_rows_skip_uniqueness_lookup', m109],
];

/** A knex migration source over the list above (no file-system scanning, works under tsx). */
export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => MIGRATIONS.map(([name]) => name),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const found = MIGRATIONS.find(([n]) => n === name);
    if (!found) throw new Error(`unknown migration ${name}`);
    return found[1];
  },
};
