import { Agent } from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import axios, { type LookupAddressEntry } from 'axios';
import { readCapped } from './read-capped';
import { classifySendError, type SendErrorCode, type SendResult } from './send-errors';
import {
  checkUrlTarget,
  parseWebhookUrl,
  WebhookTargetError,
  type CheckedTarget,
  type LookupFn,
} from './url-policy';

/** Response headers kept per attempt, and the characters kept of each value. */
const MAX_RESPONSE_HEADERS = 50;
const MAX_HEADER_VALUE = 1024;

/** The response's headers for the delivery log: at most 50, each value at most 1 KiB. */
function keptHeaders(raw: Record<string, unknown>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw).slice(0, MAX_RESPONSE_HEADERS)) {
    if (value === undefined || value === null) continue;
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    kept[name.toLowerCase()] = text.slice(0, MAX_HEADER_VALUE);
  }
  return kept;
}

/** Options of {@link createWebhookSender}. */
export interface WebhookSenderOptions {
  /** Deadline of one attempt, DNS + connect + TLS + response headers (contract: 10 000). */
  timeoutMs: number;
  /** Skip the address policy; development and tests only. HTTPS stays mandatory. */
  allowPrivateTargets: boolean;
  /** Resolver for host names; defaults to the OS resolver. */
  lookup?: LookupFn;
  userAgent?: string;
  /** Response bytes read before the connection is dropped. Default 64 KiB. */
  maxResponseBytes?: number;
  /** Bytes of the read body kept in `response_excerpt`. Default 1 KiB. */
  excerptBytes?: number;
  /**
   * Extra trusted CA certificates (PEM), added to Node's default roots, e.g. a test receiver's
   * self-signed certificate. (`NODE_EXTRA_CA_CERTS` does the same at process level.)
   */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
}

/** One delivery request. */
export interface SendRequest {
  url: string;
  /** Raw JSON, sent byte for byte (it is what was signed). */
  body: string;
  /** Typically the output of `signPayload`. */
  headers: Readonly<Record<string, string>>;
}

/** An SSRF-safe HTTPS webhook sender. */
export interface WebhookSender {
  /** Makes exactly one attempt. Never throws for delivery failures: see `SendResult.error`. */
  send(request: SendRequest): Promise<SendResult>;
  /** Closes pooled keep-alive connections. */
  close(): void;
}

type LookupCallback = (error: Error | null, addresses: LookupAddressEntry[]) => void;

/** Headers the sender owns; a caller's copy would break framing or identity. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'user-agent',
  'transfer-encoding',
  'connection',
]);

/**
 * A lookup handed to the socket so it connects ONLY to the addresses that passed the policy:
 * the name is never resolved a second time, so DNS rebinding cannot swap the target. The URL
 * keeps the original host name, so SNI, certificate checks and `Host` still use it.
 */
function pinnedLookup(target: CheckedTarget) {
  const addresses: LookupAddressEntry[] = target.addresses.map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));
  return (hostname: string, _options: object, callback: LookupCallback): void => {
    if (hostname !== target.hostname) {
      callback(new Error(`unexpected lookup of ${hostname}`), []);
      return;
    }
    callback(null, addresses);
  };
}

function outgoingHeaders(
  request: SendRequest,
  userAgent: string,
  length: number,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!RESERVED_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  headers['Content-Type'] = 'application/json';
  headers['Content-Length'] = String(length);
  headers['User-Agent'] = userAgent;
  headers['Accept-Encoding'] = 'identity';
  return headers;
}

/**
 * A request written on a pooled connection the receiver had just closed as idle (its
 * keep-alive timeout ended as the request left): the connection is reset before any answer,
 * and the receiver saw nothing. Such a request is sent again at once on a new connection,
 * within the same attempt and deadline (Node's own advice for `request.reusedSocket`); a
 * reset on a new connection is the receiver's, and stays a failure.
 */
function closedWhileIdle(error: unknown): boolean {
  const { code, request } = error as { code?: unknown; request?: { reusedSocket?: unknown } };
  return (code === 'ECONNRESET' || code === 'EPIPE') && request?.reusedSocket === true;
}

/**
 * Creates a sender with one keep-alive connection pool shared by all sends. Each attempt:
 * validate the URL, resolve the host once, check every address (unless
 * `allowPrivateTargets`), connect only to a checked address, never follow redirects, read at
 * most `maxResponseBytes`. 2xx is delivered; 3xx is `redirect`; any other status `http_error`.
 * A pooled connection is reused only for its own host name, and was dialled to an address
 * that passed the check at dial time.
 */
export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const userAgent = options.userAgent ?? 'Switchboard-Webhooks/1';
  const maxResponseBytes = options.maxResponseBytes ?? 65_536;
  const excerptBytes = options.excerptBytes ?? 1024;
  // Node's `ca` replaces the default roots; keep them so public receivers still validate.
  const ca =
    options.ca === undefined
      ? undefined
      : ([...rootCertificates] as Array<string | Buffer>).concat(options.ca);
  const agent = new Agent({ keepAlive: true, ca });
  // A private instance: interceptors or defaults other code sets on the global axios never apply.
  const client = axios.create();

  async function attempt(
    request: SendRequest,
    deadline: AbortSignal,
  ): Promise<Omit<SendResult, 'duration_ms'>> {
    const none = { delivered: false, status_code: null, response_excerpt: null } as const;
    const failed = (error: SendErrorCode) => ({ ...none, error });
    const parsed = parseWebhookUrl(request.url);
    if (!parsed.ok) return failed('invalid_url');
    let target: CheckedTarget;
    try {
      target = await checkUrlTarget(parsed.url, {
        lookup: options.lookup,
        allowPrivate: options.allowPrivateTargets,
        signal: deadline,
      });
    } catch (error) {
      return failed(
        error instanceof WebhookTargetError
          ? error.code
          : classifySendError(error, deadline.aborted),
      );
    }
    const body = Buffer.from(request.body, 'utf8');
    const sent = outgoingHeaders(request, userAgent, body.length);
    const sentNone = {
      delivered: false,
      status_code: null,
      response_excerpt: null,
      request_headers: sent,
      response_headers: null,
    } as const;
    const post = () =>
      client.request<Readable>({
        url: parsed.url.href,
        method: 'POST',
        data: body,
        headers: sent,
        httpsAgent: agent,
        lookup: pinnedLookup(target),
        proxy: false, // never route through an environment proxy: it would dial on our behalf
        maxRedirects: 0,
        validateStatus: () => true,
        responseType: 'stream',
        decompress: false,
        transformRequest: [(data: unknown) => data],
        signal: deadline,
      });
    let response;
    try {
      response = await post().catch((error: unknown) => {
        if (!closedWhileIdle(error) || deadline.aborted) throw error;
        return post();
      });
    } catch (error) {
      return { ...sentNone, error: classifySendError(error, deadline.aborted) };
    }
    const status = response.status;
    // The status is in: the verdict no longer depends on the body, whose read the deadline cuts.
    const bytes = await readCapped(response.data, maxResponseBytes, deadline);
    const excerpt = bytes.subarray(0, excerptBytes).toString('utf8');
    const delivered = status >= 200 && status < 300;
    const error = delivered ? null : status >= 300 && status < 400 ? 'redirect' : 'http_error';
    return {
      delivered,
      status_code: status,
      error,
      response_excerpt: excerpt,
      request_headers: sent,
      response_headers: keptHeaders(response.headers as Record<string, unknown>),
    };
  }

  return {
    async send(request) {
      const started = performance.now();
      const deadline = AbortSignal.timeout(options.timeoutMs);
      let result: Omit<SendResult, 'duration_ms'>;
      try {
        result = await attempt(request, deadline);
      } catch (error) {
        result = {
          delivered: false,
          status_code: null,
          response_excerpt: null,
          error: classifySendError(error, deadline.aborted),
        };
      }
      return { ...result, duration_ms: Math.round(performance.now() - started) };
    },
    close() {
      agent.destroy();
    },
  };
}
