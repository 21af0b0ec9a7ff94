import { checkUrlTarget, parseWebhookUrl, WebhookTargetError } from '@switchboard/webhooks';
import type { Deps } from '../deps';
import { invalidParameter } from '../errors';

/**
 * One message for a host that does not resolve, resolves too slowly, or resolves to a
 * non-public address: distinct answers would tell a caller which internal names exist.
 */
const NOT_PUBLIC_MESSAGE =
  'url must point to a public address: its host must resolve, and only to global unicast ' +
  'addresses (not loopback, private, link-local, shared, multicast, reserved, documentation ' +
  'or metadata addresses)';

/** The policy's messages start with "url"; a field of another name gets its own name there. */
const named = (param: string, message: string): string => message.replace(/^url\b/, param);

/**
 * The creation-time URL policy (docs/API.md, Webhooks): https only, no user-info, at most
 * 2048 characters, and a host whose every address is global unicast (unless
 * WEBHOOK_ALLOW_PRIVATE_TARGETS). The sender repeats the address check at every send on the
 * address it actually dials, so this check is an early answer, not the safeguard.
 * Every failure is a 400 invalid_parameter on `param` (`url` for subscriptions, `webhook_url`
 * for a receptionist's legacy URL). Returns the URL as given.
 */
export async function checkSubscriptionUrl(
  raw: string,
  deps: Pick<Deps, 'config' | 'webhookLookup'>,
  param = 'url',
): Promise<string> {
  const fail = (message: string) => invalidParameter(param, named(param, message));
  const parsed = parseWebhookUrl(raw);
  if (!parsed.ok) throw fail(parsed.message);
  const signal = AbortSignal.timeout(deps.config.webhook.timeoutMs);
  try {
    await checkUrlTarget(parsed.url, {
      lookup: deps.webhookLookup,
      allowPrivate: deps.config.webhook.allowPrivateTargets,
      signal,
    });
  } catch (error) {
    if (error instanceof WebhookTargetError || signal.aborted) throw fail(NOT_PUBLIC_MESSAGE);
    throw error;
  }
  return raw;
}
