import type { CliContext } from './context';

type Run = (ctx: CliContext, argv: string[]) => Promise<object>;

/** One operator command: its usage line, what it does, and how to run it. */
export interface CommandSpec {
  usage: string;
  about: string;
  /**
   * Loaded when the command runs, not at start: `--help` and the light commands do not pay
   * for the modules of the heavy ones (telephony for seed-demo, CSV parsing for lead import).
   */
  load: () => Promise<Run>;
}

const basic = () => import('./commands/basic');

export const COMMANDS: Record<string, CommandSpec> = {
  'tenant create': {
    usage: 'tenant create --name NAME [--plan-minutes N]',
    about: 'Creates a tenant (plan minutes default 1000).',
    load: async () => (await basic()).tenantCreate,
  },
  'tenant list': {
    usage: 'tenant list',
    about: 'Lists every tenant, oldest first.',
    load: async () => (await basic()).tenantList,
  },
  'tenant limits': {
    usage: 'tenant limits --id TENANT_ID (--rate PER_SECOND --burst N | --default)',
    about: "Sets the tenant's API rate limit per key, or returns it to the deployment's default.",
    load: async () => (await basic()).tenantLimits,
  },
  'tenant retention': {
    usage: 'tenant retention --id TENANT_ID [--calls-days N|forever] [--delivery-days N|default]',
    about: "Sets how long the tenant's calls and webhook deliveries are kept.",
    load: async () => (await import('./commands/retention')).tenantRetention,
  },
  'tenant sms-replies': {
    usage:
      'tenant sms-replies --id TENANT_ID [--stop TEXT|default] [--start TEXT|default] ' +
      '[--help-text TEXT|default]',
    about: 'Sets the replies to STOP, START and HELP texts; prints the texts in effect.',
    load: async () => (await import('./commands/sms-replies')).tenantSmsReplies,
  },
  'tenant portal-origins': {
    usage:
      'tenant portal-origins --id TENANT_ID (--origins https://a.example,https://b.example | --none)',
    about: 'Sets which sites may embed the tenant portal in a frame (default: none).',
    load: async () => (await import('./commands/portal')).tenantPortalOrigins,
  },
  'portal link': {
    usage:
      'portal link --tenant TENANT_ID [--capabilities view,manage_endpoints,manage_secrets,recover] ' +
      '[--ttl SECONDS] [--base-url http://127.0.0.1:3000]',
    about:
      'Prints a one-use portal link (default capabilities view,manage_endpoints,recover; ' +
      'manage_secrets allows secret rotation); it expires after --ttl (3600 s).',
    load: async () => (await import('./commands/portal')).portalLink,
  },
  'key create': {
    usage:
      'key create --tenant TENANT_ID --scopes read,write,admin [--name NAME] [--mode live|test]',
    about:
      'Creates an API key (sk_live_…, or sk_test_… with --mode test: test mode); the key ' +
      'itself is printed once and never again.',
    load: async () => (await basic()).keyCreate,
  },
  'key list': {
    usage: 'key list --tenant TENANT_ID',
    about: "Lists a tenant's API keys (prefix, scopes, revoked_at; never the key itself).",
    load: async () => (await basic()).keyList,
  },
  'key revoke': {
    usage: 'key revoke --id KEY_ID',
    about:
      'Revokes an API key and ends the portal sessions it created (from the next request); ' +
      'prints portal_sessions_ended.',
    load: async () => (await basic()).keyRevoke,
  },
  'receptionist create': {
    usage: 'receptionist create --tenant TENANT_ID --name NAME',
    about: 'Creates a ready receptionist with a number.',
    load: async () => (await import('./commands/receptionists')).receptionistCreate,
  },
  'receptionist list': {
    usage: 'receptionist list --tenant TENANT_ID',
    about: "Lists a tenant's receptionists, oldest first.",
    load: async () => (await import('./commands/receptionists')).receptionistList,
  },
  'lead import': {
    usage: 'lead import --tenant TENANT_ID --file leads.csv',
    about: 'Imports a CSV file of leads in this process (progress on stderr).',
    load: async () => (await import('./commands/lead-import')).leadImport,
  },
  'seed-demo': {
    usage: 'seed-demo',
    about: 'Creates the demo tenant once: three receptionists and a week of calls.',
    load: async () => (await import('./commands/seed-demo')).seedDemoCommand,
  },
};
