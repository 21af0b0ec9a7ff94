import { randomUUID } from 'node:crypto';
import type { QueryValue, Transport } from '../http';
import { fromDataPage, PageIterator, type DataPage, type Page } from '../pagination';

/** A path segment from a caller's id: never lets an id change the path. */
export const segment = (id: string): string => encodeURIComponent(id);

/** Options of every creating request (`calls.startOutbound`, `sms.send`, `leads.create`, ...). */
export interface IdempotentRequestOptions {
  /**
   * Makes retries safe: the same key and body never create a second resource. Generated (a
   * random UUID) when omitted, and reused by this request's own retries; pass your own (e.g.
   * your order id) to stay safe across process restarts too.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/**
 * Options of an edit (`update`, `delete`, `cancel`): `ifMatch`, an ETag (see `etagOf`),
 * makes it apply only while the resource is still at that version; otherwise it throws a 412
 * `precondition_failed` and changes nothing. A retry after an answer that never came may
 * meet that 412 because the first try applied: read the resource again to know.
 */
export interface EditOptions {
  ifMatch?: string;
}

/** The key a creating request sends on every try: the caller's, or one made for it now. */
export const idempotencyKeyOf = (options: IdempotentRequestOptions): string =>
  options.idempotencyKey ?? randomUUID();

/**
 * What every resource group builds on: the transport, a lazily paginated GET, and the few
 * request shapes the operations share (read one, create with a key, act on one). A new group
 * (SMS, leads, ...) is a class extending this with one method per operation, plus one line in
 * the client.
 */
export abstract class Resource {
  constructor(protected readonly http: Transport) {}

  /** A list endpoint as an async iterator: `toPage` maps its body to items and next cursor. */
  protected paginate<T, Body>(
    path: string,
    params: { cursor?: string } & object,
    toPage: (body: Body) => Page<T>,
  ): PageIterator<T> {
    const { cursor, ...query } = params as { cursor?: string } & Record<string, QueryValue>;
    return new PageIterator(async (at) => {
      const body = await this.http.request<Body>({
        method: 'GET',
        path,
        query: { ...query, cursor: at },
        idempotent: true,
      });
      return toPage(body);
    }, cursor);
  }

  /** A `{data, has_more, cursor}` list endpoint as an async iterator. */
  protected paginateData<T>(path: string, params: { cursor?: string } & object): PageIterator<T> {
    return this.paginate(path, params, (page: DataPage<T>) => fromDataPage(page));
  }

  /** A GET of one resource: safe to repeat, so retried like any idempotent request. */
  protected fetchOne<T>(path: string): Promise<T> {
    return this.http.request({ method: 'GET', path, idempotent: true });
  }

  /**
   * A creating POST: its Idempotency-Key (the caller's, or one made now) is sent on every try,
   * which is what makes its retries safe.
   */
  protected createIdempotent<T>(
    path: string,
    body: unknown,
    options: IdempotentRequestOptions,
  ): Promise<T> {
    return this.http.request({
      method: 'POST',
      path,
      body,
      idempotencyKey: idempotencyKeyOf(options),
      idempotent: true,
      signal: options.signal,
    });
  }

  /**
   * Any other operation on a path: `idempotent` says whether sending it twice acts once (see
   * `ApiRequest.idempotent`), which decides whether an ambiguous failure is retried.
   */
  protected invoke<T>(
    method: 'POST' | 'PATCH' | 'DELETE',
    path: string,
    request: { body?: unknown; idempotent: boolean; ifMatch?: string },
  ): Promise<T> {
    return this.http.request({ method, path, ...request });
  }
}
