import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { isBlockedAddress } from './address-policy';

/** Longest accepted webhook URL, counted on both the raw input and the normalised href. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Why {@link parseWebhookUrl} refused a URL. */
export type UrlRejectionReason =
  'not_a_string' | 'too_long' | 'invalid_url' | 'not_https' | 'has_credentials' | 'missing_host';

/** Result of {@link parseWebhookUrl}. */
export type ParsedWebhookUrl =
  { ok: true; url: URL } | { ok: false; reason: UrlRejectionReason; message: string };

function reject(reason: UrlRejectionReason, message: string): ParsedWebhookUrl {
  return { ok: false, reason, message };
}

/**
 * Syntactic checks on a subscription URL: absolute `https:`, at most 2048 characters, no
 * user-info, a host. It does not look at addresses; follow with {@link checkUrlTarget}.
 * The returned URL is WHATWG-normalised: IPv4 literals in decimal, hex, octal or short form
 * (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) already read `127.0.0.1` in `hostname`.
 */
export function parseWebhookUrl(raw: unknown): ParsedWebhookUrl {
  if (typeof raw !== 'string') return reject('not_a_string', 'url must be a string');
  if (raw.length > MAX_WEBHOOK_URL_LENGTH)
    return reject('too_long', 'url is longer than 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return reject('invalid_url', 'url is not an absolute URL');
  }
  if (url.protocol !== 'https:') return reject('not_https', 'url must use https');
  if (url.username !== '' || url.password !== '')
    return reject('has_credentials', 'url must not contain user-info');
  if (url.hostname === '') return reject('missing_host', 'url has no host');
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH)
    return reject('too_long', 'url is longer than 2048 characters');
  return { ok: true, url };
}

/** One resolved address; `family` is informational, the policy re-derives it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * Resolves a host name to all its addresses. `dns.promises.lookup` fits as is; tests inject
 * fakes. A single (non-array) answer is tolerated.
 */
export type LookupFn = (
  hostname: string,
  options: { all: true },
) => Promise<readonly ResolvedAddress[] | ResolvedAddress>;

/** The default resolver: the OS resolver (`getaddrinfo`), all addresses. */
export const systemLookup: LookupFn = (hostname, options) => dns.lookup(hostname, options);

/** Codes of {@link WebhookTargetError}; they match the sender's `SendResult.error`. */
export type TargetErrorCode = 'blocked_address' | 'dns_error';

/** The URL's host resolves to a forbidden address, or could not be resolved. */
export class WebhookTargetError extends Error {
  override readonly name = 'WebhookTargetError';
  constructor(
    readonly code: TargetErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Options of {@link checkUrlTarget}. */
export interface CheckTargetOptions {
  /** Defaults to {@link systemLookup}. */
  lookup?: LookupFn;
  /** Skip the address policy (development and tests only). Resolution still happens. */
  allowPrivate?: boolean;
  /** Abandons the lookup when aborted (rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** A host and the addresses that passed the policy: the only ones a connection may use. */
export interface CheckedTarget {
  /** URL host without IPv6 brackets. */
  hostname: string;
  /** True when the URL named an IP literal (no DNS involved). */
  literal: boolean;
  /** Non-empty; every entry passed the policy unless `allowPrivate` was set. */
  addresses: readonly ResolvedAddress[];
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, rejectPromise) => {
    const onAbort = (): void => rejectPromise(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise
      .then(resolve, rejectPromise)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function resolve(hostname: string, options: CheckTargetOptions): Promise<ResolvedAddress[]> {
  const lookup = options.lookup ?? systemLookup;
  let answer: readonly ResolvedAddress[] | ResolvedAddress;
  try {
    answer = await abortable(lookup(hostname, { all: true }), options.signal);
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new WebhookTargetError('dns_error', `cannot resolve ${hostname}`, { cause: error });
  }
  const list = Array.isArray(answer) ? answer : [answer as ResolvedAddress];
  if (list.length === 0 || list.some((entry) => isIP(entry.address) === 0)) {
    throw new WebhookTargetError('dns_error', `no usable address for ${hostname}`);
  }
  return list.map((entry) => ({ address: entry.address, family: isIP(entry.address) }));
}

/**
 * Resolves the URL's host once and applies the address policy to EVERY answer: one blocked
 * address rejects the whole target, since the connection could land on any of them.
 * Connect only to the returned addresses (see the sender), never resolve the name again:
 * a second lookup is what DNS rebinding exploits.
 * @throws WebhookTargetError with code `blocked_address` or `dns_error`; if `signal` aborts,
 *   its reason is thrown instead.
 */
export async function checkUrlTarget(
  url: URL,
  options: CheckTargetOptions = {},
): Promise<CheckedTarget> {
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = isIP(hostname) !== 0;
  const addresses = literal
    ? [{ address: hostname, family: isIP(hostname) }]
    : await resolve(hostname, options);
  if (!options.allowPrivate) {
    const blocked = addresses.find((entry) => isBlockedAddress(entry.address));
    if (blocked) {
      // The address itself stays out of the message: it would let callers map internal DNS.
      throw new WebhookTargetError(
        'blocked_address',
        `${hostname} resolves to a non-public address`,
      );
    }
  }
  return { hostname, literal, addresses };
}
