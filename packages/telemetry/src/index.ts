export { serveMetrics } from './metrics-server';
export { startTracing, type Tracing, type TracingSettings } from './tracing';
export {
  contextFromTraceparent,
  currentTraceId,
  currentTraceparent,
  inSpan,
  markFailed,
  SpanKind,
  startSpan,
  traceHeaders,
  tracingStarted,
  withContext,
  type Context,
  type Span,
  type SpanOptions,
} from './spans';
