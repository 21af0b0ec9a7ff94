import type { PageIterator } from '../pagination';
import type { Lead, LeadCreate, LeadImport, LeadUpdate, ListParams } from '../types';
import {
  idempotencyKeyOf,
  Resource,
  segment,
  type EditOptions,
  type IdempotentRequestOptions,
} from './resource';

/**
 * A CSV file for `leads.import`: its text, its bytes (a `Buffer` is a `Uint8Array`), or a
 * stream of them, such as a Node `Readable` (`fs.createReadStream('leads.csv')`).
 */
export type CsvInput = string | Uint8Array | AsyncIterable<Uint8Array | string>;

/** The largest file `POST /leads/import` accepts: 20 MiB. */
export const MAX_LEAD_IMPORT_BYTES = 20 * 1024 * 1024;

/**
 * The file's bytes. A stream is read to its end first, because every try of the request
 * (and so a retry with the same Idempotency-Key) must send the same bytes again; it is
 * refused with a RangeError, before anything is sent, once it passes the API's 20 MiB, so
 * holding it costs at most that much memory. Text and bytes are sent as they are (a larger
 * file is the API's 413 `payload_too_large`).
 */
async function csvBody(input: CsvInput): Promise<string | Uint8Array> {
  if (typeof input === 'string' || input instanceof Uint8Array) return input;
  const encoder = new TextEncoder();
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Leaving the loop early (the throw) ends the stream: a Readable is destroyed.
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
    size += bytes.byteLength;
    if (size > MAX_LEAD_IMPORT_BYTES) {
      throw new RangeError('The CSV file is larger than 20 MiB, the most an import accepts');
    }
    chunks.push(bytes);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

/** Leads: create, read, update, search, and CSV imports with their progress. */
export class LeadsResource extends Resource {
  /**
   * Creates a lead (201, `lead.created`). It needs a phone or an email; a phone that already
   * has a lead is a 409 `lead_exists` whose message names that lead. Idempotent: a key is
   * generated when none is given and reused on this call's retries.
   */
  create(body: LeadCreate, options: IdempotentRequestOptions = {}): Promise<Lead> {
    return this.createIdempotent('/leads', body, options);
  }

  get(id: string): Promise<Lead> {
    return this.fetchOne(`/leads/${segment(id)}`);
  }

  /**
   * Changes the fields given (`tags` and `metadata` are replaced whole). `lead.updated` names
   * the fields whose value changed; an update that changes nothing emits nothing. With
   * `ifMatch`, only if the lead is still at that version (see {@link EditOptions}).
   */
  update(id: string, body: LeadUpdate, options: EditOptions = {}): Promise<Lead> {
    return this.invoke('PATCH', `/leads/${segment(id)}`, {
      body,
      idempotent: true,
      ifMatch: options.ifMatch,
    });
  }

  /**
   * Leads matching `q` (a name or email fragment, any case, or phone digits), `status` and
   * `tag`, newest first, following cursors (`limit` is the page size, 1 to 50, default 10):
   * `for await (const lead of client.leads.search({ q: 'whitf' }))`.
   */
  search(params: ListParams<'searchLeads'> = {}): PageIterator<Lead> {
    return this.paginateData<Lead>('/leads/search', params);
  }

  /**
   * Uploads a CSV file (`Content-Type: text/csv`, up to 20 MiB) and answers at once (202,
   * `status: "processing"`); the service imports it in batches. Follow it with
   * `getImport(id)`. Idempotent: a key is generated when none is given and reused on this
   * call's retries, so a retry never imports the file twice. See {@link CsvInput}.
   */
  async import(csv: CsvInput, options: IdempotentRequestOptions = {}): Promise<LeadImport> {
    const data = await csvBody(csv);
    return this.http.request({
      method: 'POST',
      path: '/leads/import',
      rawBody: { contentType: 'text/csv', data },
      idempotencyKey: idempotencyKeyOf(options),
      idempotent: true,
      signal: options.signal,
    });
  }

  /** An import and its progress: `processed_rows` of `total_rows`, the counters, row errors. */
  getImport(id: string): Promise<LeadImport> {
    return this.fetchOne(`/leads/imports/${segment(id)}`);
  }
}
