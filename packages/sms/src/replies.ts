import type { SmsReplyKind, SmsReplyTexts } from '@switchboard/db';

/**
 * The default replies to SMS keywords (docs/API.md, SMS), the texts US carriers expect; a
 * tenant replaces any of them with the CLI (`tenant sms-replies`).
 */
export const DEFAULT_SMS_REPLIES: Readonly<Record<SmsReplyKind, string>> = {
  opt_out:
    'You have been unsubscribed and will receive no more messages from this number. ' +
    'Reply START to resubscribe.',
  opt_in:
    'You have been resubscribed to messages from this number. Reply HELP for help, ' +
    'STOP to unsubscribe.',
  help: 'Reply STOP to unsubscribe, START to resubscribe. Msg & data rates may apply.',
};

/** The reply text of `kind` for a tenant: its own, else the default. */
export const smsReplyText = (kind: SmsReplyKind, texts: SmsReplyTexts | undefined): string =>
  texts?.[kind] ?? DEFAULT_SMS_REPLIES[kind];
