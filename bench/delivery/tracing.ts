import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { startTracing, type Tracing } from '@switchboard/telemetry';

/**
 * BENCH_TRACING: `off` (the default), `on` (the bench process and the worker export spans
 * to a sink collector on 127.0.0.1 that accepts every OTLP/HTTP request), `down` (the same,
 * but the collector's port is closed). The bench process traces too, so the events it
 * emits carry a traceparent as ingested ones do, and the worker's relay, fan-out and
 * attempts join their traces.
 */
export type TracingMode = 'off' | 'on' | 'down';

export interface BenchTracing {
  mode: TracingMode;
  /** Variables for the worker processes. */
  env: Record<string, string>;
  /** OTLP requests the sink received (on). */
  exports(): number;
  close(): Promise<void>;
}

async function closedPort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

export async function startBenchTracing(mode: TracingMode): Promise<BenchTracing> {
  if (mode === 'off') return { mode, env: {}, exports: () => 0, close: async () => undefined };
  let received = 0;
  let sink: Server | null = null;
  let port: number;
  if (mode === 'on') {
    sink = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => sink?.listen(0, '127.0.0.1', r));
    port = (sink.address() as { port: number }).port;
  } else {
    port = await closedPort();
  }
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` };
  // The bench's own exporter reads the standard variable, like the worker's.
  Object.assign(process.env, env);
  const tracing: Tracing | null = startTracing(
    { enabled: true, serviceName: null },
    'switchboard-bench',
  );
  return {
    mode,
    env,
    exports: () => received,
    async close() {
      await tracing?.shutdown();
      await new Promise((r) => (sink ? sink.close(r) : r(undefined)));
    },
  };
}
