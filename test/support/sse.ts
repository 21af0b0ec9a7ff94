import { request, type IncomingHttpHeaders } from 'node:http';
import { waitFor } from './wait';

/** One dispatched message of an event stream. */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/** A client of one `text/event-stream` request, over node:http (no SSE library). */
export interface SseClient {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every byte received so far, as text. */
  readonly text: string;
  /** The messages with data received so far, in order. */
  readonly messages: SseMessage[];
  /** The JSON body of an answer that is not a stream (an error). */
  readonly body: unknown;
  /** Resolves when the server ended the response ('end'), or 'error' when it was cut. */
  readonly ended: Promise<'end' | 'error'>;
  /** Waits (bounded) until `n` messages have arrived; returns them. */
  waitForMessages(n: number, timeoutMs?: number): Promise<SseMessage[]>;
  /** The client goes away (closes its connection). */
  close(): void;
}

/** Parses complete messages out of `text` (blank-line separated; comments skipped). */
function parse(text: string): SseMessage[] {
  const out: SseMessage[] = [];
  const blocks = text.split('\n\n');
  blocks.pop(); // an unfinished message
  for (const block of blocks) {
    const m: Partial<SseMessage> & { data?: string } = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'id') m.id = value;
      else if (field === 'event') m.event = value;
      else if (field === 'data') m.data = m.data === undefined ? value : `${m.data}\n${value}`;
    }
    if (m.data !== undefined) out.push(m as SseMessage);
  }
  return out;
}

/** GET `path` of `baseUrl` with `headers`; resolves once the answer's headers are in. */
export function openSse(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { headers, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      let endedWith: (how: 'end' | 'error') => void = () => undefined;
      const ended = new Promise<'end' | 'error'>((r) => (endedWith = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => endedWith('end'));
      res.on('error', () => endedWith('error'));
      res.on('aborted', () => endedWith('error'));
      req.on('error', () => endedWith('error'));
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        get text() {
          return text;
        },
        get messages() {
          return parse(text);
        },
        get body() {
          try {
            return JSON.parse(text) as unknown;
          } catch {
            return undefined;
          }
        },
        ended,
        waitForMessages: (n, timeoutMs = 30_000) =>
          waitFor(
            `${n} event stream message(s) (have ${parse(text).length})`,
            () => {
              const m = parse(text);
              return m.length >= n ? m : undefined;
            },
            { timeoutMs },
          ),
        close: () => {
          req.destroy();
          res.destroy();
        },
      };
      if (res.statusCode === 200) resolve(client);
      else res.on('end', () => resolve(client));
    });
    req.end();
  });
}
