import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type * as SdkNode from '@opentelemetry/sdk-trace-node';
import { setTracingStarted } from './spans';

/*
 * The SDK and the exporter are loaded only when tracing is on: loading them costs about a
 * second of start-up on a busy machine, which a process with tracing off should not pay.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const loadSdk = () => ({
  sdk: require('@opentelemetry/sdk-trace-node') as typeof SdkNode,
  resources: require('@opentelemetry/resources') as typeof Resources,
  otlp: require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp,
});
/* eslint-enable @typescript-eslint/no-require-imports */

/** The resource attribute naming the process (OpenTelemetry semantic conventions). */
const ATTR_SERVICE_NAME = 'service.name';

/** How long a stopping process waits for its last spans to be exported. */
const SHUTDOWN_FLUSH_MS = 2_000;

export interface TracingSettings {
  enabled: boolean;
  /** OTEL_SERVICE_NAME; null for the process's default. */
  serviceName: string | null;
}

export interface Tracing {
  /** Exports what is buffered and stops; spans after it are dropped. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry tracing for this process when `settings.enabled` (an OTLP endpoint
 * is configured), else returns null and every span of the code base is a no-op, and no
 * trace context is carried anywhere (`currentTraceparent` answers null at once). Spans go
 * to the OTLP/HTTP exporter, which reads the standard OTEL_EXPORTER_OTLP_* variables itself,
 * in batches: a collector that is slow or down costs dropped spans, never a slower request
 * or delivery (the export runs off the request path and its failures are swallowed).
 * Registers the global provider, the AsyncLocalStorage context manager and the W3C
 * traceparent propagator. `exporter` is a test seam: spans go to it one by one instead
 * (e.g. an in-memory exporter).
 */
export function startTracing(
  settings: TracingSettings,
  defaultServiceName: string,
  exporter?: SdkNode.SpanExporter,
): Tracing | null {
  if (!settings.enabled) return null;
  const { sdk, resources, otlp } = loadSdk();
  const { defaultResource, resourceFromAttributes } = resources;
  const { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor } = sdk;
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({
        [ATTR_SERVICE_NAME]: settings.serviceName ?? defaultServiceName,
      }),
    ),
    spanProcessors: [
      exporter
        ? new SimpleSpanProcessor(exporter)
        : new BatchSpanProcessor(new otlp.OTLPTraceExporter()),
    ],
  });
  provider.register();
  setTracingStarted(true);
  return {
    // A collector that is down must not hold a stopping process: flush for a short while.
    shutdown: () => {
      setTracingStarted(false);
      return Promise.race([
        provider.shutdown().catch(() => undefined),
        new Promise<void>((r) => setTimeout(r, SHUTDOWN_FLUSH_MS).unref()),
      ]);
    },
  };
}
