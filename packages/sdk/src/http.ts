import {
  SwitchboardConnectionError,
  SwitchboardError,
  type ErrorCode,
  type SwitchboardErrorType,
} from './errors';
import { rememberEtag } from './etags';
import { backoffMs, retryAfterMs, sleep, type RetryPolicy } from './retry';

/** A query parameter; an array is the parameter repeated (`?type=a&type=b`). */
export type QueryValue = string | number | boolean | null | undefined | readonly string[];

/** One API call, as the resource groups describe it. */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Below the version prefix, ids already encoded: `/calls/call_123`. */
  path: string;
  query?: Readonly<Record<string, QueryValue>>;
  /** A JSON body. */
  body?: unknown;
  /**
   * A body sent as it is, with its content type (a CSV file). Bytes, not a stream: every
   * try of the request sends them again.
   */
  rawBody?: { contentType: string; data: string | Uint8Array };
  /** Sent as `Idempotency-Key`; makes the request safe to repeat. */
  idempotencyKey?: string;
  /** Sent as `If-Match`: the edit applies only to this version (an ETag, see `etagOf`). */
  ifMatch?: string;
  /**
   * Whether sending it twice has the effect of sending it once (GET, DELETE, PATCH, a POST
   * with an idempotency key, enable). Only such requests are retried after an error that
   * leaves open whether the server acted (a dropped connection, a 500).
   */
  idempotent: boolean;
  signal?: AbortSignal;
}

export interface TransportOptions {
  apiKey: string;
  /** Ends with the version prefix, e.g. `https://api.example.com/api/v1`. */
  baseUrl: string;
  retry: RetryPolicy;
  timeoutMs: number;
  fetch: typeof fetch;
}

/** Errors where the request certainly never reached the server: always safe to retry. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

const causeCode = (error: unknown): string | undefined =>
  ((error as { cause?: { code?: unknown } }).cause?.code as string | undefined) ?? undefined;

type Outcome =
  | { kind: 'ok'; value: unknown }
  | { kind: 'retry'; error: SwitchboardError; waitMs: number | null }
  | { kind: 'fail'; error: SwitchboardError };

/**
 * Sends requests with authentication, timeouts and bounded retries. 429 and 503 are retried
 * for every request (the API refused before acting) after `Retry-After`; so is an
 * `idempotency_request_in_progress` 409 of a keyed request. Other 5xx and network errors are
 * retried only for idempotent requests, with exponential backoff and jitter.
 */
export class Transport {
  constructor(private readonly options: TransportOptions) {}

  async request<T>(req: ApiRequest): Promise<T> {
    const { retry } = this.options;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.once(req);
      if (outcome.kind === 'ok') return outcome.value as T;
      if (outcome.kind === 'fail' || attempt >= retry.maxRetries) throw outcome.error;
      const wait = outcome.waitMs ?? backoffMs(retry, attempt + 1);
      if (wait > retry.maxRetryAfterMs) throw outcome.error;
      await sleep(wait, req.signal);
    }
  }

  /**
   * Opens a long-lived GET (an event stream), authenticated as every request and never
   * retried here (its caller reconnects): `timeoutMs` bounds the wait for the answer's
   * headers only, not the body. Resolves with a 2xx response whose body is still to be
   * read; throws the API's error (a SwitchboardError) or a SwitchboardConnectionError.
   */
  async openStream(req: {
    path: string;
    query?: Readonly<Record<string, QueryValue>>;
    headers?: Readonly<Record<string, string>>;
    signal?: AbortSignal;
  }): Promise<Response> {
    const headers = {
      Authorization: `Bearer ${this.options.apiKey}`,
      Accept: 'text/event-stream',
      ...req.headers,
    };
    const opening = new AbortController();
    const timer = setTimeout(() => opening.abort(), this.options.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, opening.signal]) : opening.signal;
    let res: Response;
    try {
      res = await this.options.fetch(this.url({ ...req, method: 'GET', idempotent: true }), {
        method: 'GET',
        headers,
        signal,
      });
    } catch (error) {
      if (req.signal?.aborted) throw error;
      throw new SwitchboardConnectionError(
        opening.signal.aborted ? 'timeout' : 'network_error',
        opening.signal.aborted
          ? `No answer within ${this.options.timeoutMs} ms`
          : `Could not reach the API: ${error instanceof Error ? error.message : String(error)}`,
        error,
      );
    } finally {
      clearTimeout(timer);
    }
    if (!res.ok) throw await errorOf(res);
    return res;
  }

  private url(req: ApiRequest): string {
    const url = new URL(`${this.options.baseUrl}${req.path}`);
    for (const [name, value] of Object.entries(req.query ?? {})) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(name, String(v));
      else url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  private async once(req: ApiRequest): Promise<Outcome> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.apiKey}`,
      Accept: 'application/json',
    };
    let body: string | Uint8Array | undefined;
    if (req.rawBody !== undefined) {
      headers['Content-Type'] = req.rawBody.contentType;
      body = req.rawBody.data;
    } else if (req.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(req.body);
    }
    if (req.idempotencyKey !== undefined) headers['Idempotency-Key'] = req.idempotencyKey;
    if (req.ifMatch !== undefined) headers['If-Match'] = req.ifMatch;
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await this.options.fetch(this.url(req), {
        method: req.method,
        headers,
        body,
        signal,
      });
    } catch (error) {
      if (req.signal?.aborted) throw error; // the caller gave up: no retry, their reason
      const timedOut = timeout.aborted;
      const connectionError = new SwitchboardConnectionError(
        timedOut ? 'timeout' : 'network_error',
        timedOut
          ? `No answer within ${this.options.timeoutMs} ms`
          : `Could not reach the API: ${error instanceof Error ? error.message : String(error)}`,
        error,
      );
      const safe = req.idempotent || NOT_SENT.has(causeCode(error) ?? '');
      return safe
        ? { kind: 'retry', error: connectionError, waitMs: null }
        : { kind: 'fail', error: connectionError };
    }
    if (res.ok) {
      const value = await bodyOf(res);
      const etag = res.headers.get('etag');
      if (etag !== null && typeof value === 'object' && value !== null) rememberEtag(value, etag);
      return { kind: 'ok', value };
    }
    const error = await errorOf(res);
    const retryAfter = retryAfterMs(res.headers.get('retry-after'));
    const refusedBeforeActing =
      res.status === 429 ||
      res.status === 503 ||
      (res.status === 409 &&
        req.idempotencyKey !== undefined &&
        error.code === 'idempotency_request_in_progress');
    if (refusedBeforeActing || (res.status >= 500 && req.idempotent)) {
      return { kind: 'retry', error, waitMs: retryAfter };
    }
    return { kind: 'fail', error };
  }
}

/** A success body: JSON, or undefined for 204; anything else is the API's bug, typed. */
async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new SwitchboardError({
      status: res.status,
      type: 'api_error',
      code: 'invalid_response',
      message: `HTTP ${res.status} with a body that is not JSON`,
      request_id: res.headers.get('x-request-id'),
      headers: res.headers,
      cause,
    });
  }
}

/** The API's error body as a SwitchboardError; a non-JSON body (a proxy's page) too. */
async function errorOf(res: Response): Promise<SwitchboardError> {
  const requestId = res.headers.get('x-request-id');
  const text = await res.text().catch(() => '');
  let body: {
    error?: { type?: string; code?: string; message?: string; param?: string; doc_url?: string };
  };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = {};
  }
  const e = body.error;
  if (e?.type && e.code && e.message) {
    return new SwitchboardError({
      status: res.status,
      type: e.type as SwitchboardErrorType,
      code: e.code as ErrorCode,
      message: e.message,
      param: e.param ?? null,
      doc_url: e.doc_url ?? null,
      request_id: (body as { request_id?: string }).request_id ?? requestId,
      headers: res.headers,
    });
  }
  return new SwitchboardError({
    status: res.status,
    type: res.status >= 500 ? 'api_error' : 'invalid_request_error',
    code: 'http_error',
    message: `HTTP ${res.status} without an API error body`,
    request_id: requestId,
    headers: res.headers,
  });
}
