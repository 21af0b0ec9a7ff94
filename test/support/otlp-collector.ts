import { createServer, type Server } from 'node:http';

/** One span as an OTLP/HTTP JSON export carries it, with its process's service name. */
export interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
}

export interface OtlpCollector {
  endpoint: string;
  spans: CollectedSpan[];
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: KeyValue[];
      }>;
    }>;
  }>;
}

const valueOf = (v: AnyValue): string | number | boolean =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));

const attributesOf = (kvs: KeyValue[] = []) =>
  Object.fromEntries(kvs.map((kv) => [kv.key, valueOf(kv.value)]));

/**
 * A tiny OTLP/HTTP collector on 127.0.0.1 for tests: takes the JSON exports that
 * `@opentelemetry/exporter-trace-otlp-http` posts to `<endpoint>/v1/traces` and keeps
 * their spans.
 */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
        for (const rs of body.resourceSpans ?? []) {
          const service = String(attributesOf(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                attributes: attributesOf(s.attributes),
              });
            }
          }
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export interface StuckCollector {
  endpoint: string;
  /** Export requests received: each is held, never answered. */
  readonly held: number;
  /** Held export requests whose connection ended (the exporter gave up on them). */
  readonly ended: number;
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP endpoint on 127.0.0.1 that takes export requests and never answers them: a
 * collector that hangs. An exporter that sent to it waits until its own timeout.
 */
export async function startStuckCollector(): Promise<StuckCollector> {
  let held = 0;
  let ended = 0;
  const server: Server = createServer((req, res) => {
    held++;
    res.once('close', () => ended++);
    req.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get held() {
      return held;
    },
    get ended() {
      return ended;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
