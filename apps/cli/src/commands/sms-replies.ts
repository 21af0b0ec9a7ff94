import { safeSmsText, smsReplyText, DEFAULT_SMS_REPLIES } from '@switchboard/sms';
import type { SmsReplyKind } from '@switchboard/db';
import { parseOptions, required, UsageError } from '../args';
import type { CliContext } from '../context';

const FLAGS: Record<string, SmsReplyKind> = {
  stop: 'opt_out',
  start: 'opt_in',
  'help-text': 'help',
};

/**
 * Sets a tenant's replies to SMS keywords: `--stop TEXT` (the opt-out confirmation),
 * `--start TEXT` (the re-subscribe confirmation), `--help-text TEXT` (the HELP / INFO reply;
 * `--help` is the CLI's own usage); `default` as TEXT returns one to the documented default.
 * Prints the texts in effect.
 */
export async function tenantSmsReplies(ctx: CliContext, argv: string[]): Promise<object> {
  const o = parseOptions(argv, ['id', 'stop', 'start', 'help-text']);
  const id = required(o, 'id');
  const texts: Partial<Record<SmsReplyKind, string | null>> = {};
  for (const [flag, kind] of Object.entries(FLAGS)) {
    const raw = o[flag];
    if (raw === undefined) continue;
    if (raw === 'default') texts[kind] = null;
    else if (!raw.trim() || raw.length > 320 || safeSmsText(raw) !== raw) {
      throw new UsageError(`--${flag} must be 1 to 320 characters of text, or default`);
    } else texts[kind] = raw;
  }
  const stored = await ctx.stores.tenants.setSmsReplies(id, texts);
  if (!stored) throw new UsageError(`no tenant ${id}`);
  return {
    id,
    sms_replies: Object.fromEntries(
      Object.entries(FLAGS).map(([flag, kind]) => [
        flag,
        { text: smsReplyText(kind, stored), default: stored[kind] === null },
      ]),
    ),
    defaults: DEFAULT_SMS_REPLIES,
  };
}
