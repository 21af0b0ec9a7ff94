import { SwitchboardError } from './errors';
import type { QueryValue, Transport } from './http';
import { backoffMs, DEFAULT_RETRY, retryAfterMs, sleep } from './retry';

/** One message of a `text/event-stream` body (comments are not messages). */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
  /** The reconnection delay the server asked for (`retry:`), when this message set it. */
  retry?: number;
}

/**
 * The messages of a `text/event-stream` body, as the HTML standard parses them: lines end
 * with LF, CR or CRLF; `:` starts a comment; a blank line ends a message, which is dispatched
 * when it has data; `retry:` alone is reported as a message without data.
 */
export async function* parseEventStream(
  body: AsyncIterable<Uint8Array>,
): AsyncGenerator<SseMessage, void, undefined> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let id: string | undefined;
  let event: string | undefined;
  let retry: number | undefined;
  const line = (text: string): SseMessage | null => {
    if (text === '') {
      const message: SseMessage | null =
        data.length > 0 || retry !== undefined
          ? { data: data.join('\n'), ...(id === undefined ? {} : { id }), event, retry }
          : null;
      data = [];
      event = undefined;
      retry = undefined;
      return message;
    }
    if (text.startsWith(':')) return null;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'event') event = value;
    else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
    return null;
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (;;) {
      const end = buffer.search(/\r\n|\r|\n/);
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (end < 0 || (buffer[end] === '\r' && end === buffer.length - 1)) break;
      const width = buffer.startsWith('\r\n', end) ? 2 : 1;
      const message = line(buffer.slice(0, end));
      buffer = buffer.slice(end + width);
      if (message) yield message;
    }
  }
}

export interface EventStreamOptions {
  /** Start right after this event (an id you kept), instead of now. */
  lastEventId?: string;
  /** Aborting ends the iteration (as `break` does). */
  signal?: AbortSignal;
}

/** The API refused before streaming, and would refuse again: only these are worth a retry. */
const retryable = (error: unknown): boolean =>
  !(error instanceof SwitchboardError) ||
  error.status === null ||
  error.status === 429 ||
  error.status >= 500;

/**
 * The events of `GET /events/stream`, resumed after a dropped connection with
 * `Last-Event-ID` (the last event yielded), so none is missed or repeated. Reconnects after
 * the delay the server gives (`retry:`), or backs off after a refusal worth retrying (429,
 * 5xx, no connection: `Retry-After` when there is one). Ends when the server says there is
 * nothing more (204, a `created_to` that has passed) or when the caller stops (`break`,
 * `signal`); throws any other refusal (401, 403, 404, 400).
 */
export async function* resumingEventStream<T>(
  http: Transport,
  query: Readonly<Record<string, QueryValue>>,
  options: EventStreamOptions = {},
): AsyncGenerator<T, void, undefined> {
  let last = options.lastEventId ?? null;
  let reconnectMs = 2_000;
  let failures = 0;
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  try {
    while (!signal.aborted) {
      let res: Response;
      try {
        res = await http.openStream({
          path: '/events/stream',
          query,
          headers: last ? { 'Last-Event-ID': last } : {},
          signal,
        });
      } catch (error) {
        if (signal.aborted) return;
        if (!retryable(error)) throw error;
        failures += 1;
        const after =
          error instanceof SwitchboardError
            ? retryAfterMs(error.headers?.get('retry-after') ?? null)
            : null;
        await sleep(after ?? backoffMs(DEFAULT_RETRY, failures), signal).catch(() => undefined);
        continue;
      }
      failures = 0;
      if (res.status === 204 || !res.body) return;
      try {
        for await (const message of parseEventStream(res.body)) {
          if (message.retry !== undefined) reconnectMs = message.retry;
          if (message.data === '') continue;
          const event = JSON.parse(message.data) as T;
          if (message.id !== undefined) last = message.id;
          yield event;
        }
      } catch (error) {
        // The connection dropped mid-stream (or the caller stopped): reconnect below.
        if (signal.aborted) return;
        if (error instanceof SyntaxError) throw error;
      }
      await sleep(reconnectMs, signal).catch(() => undefined);
    }
  } finally {
    stop.abort();
  }
}
