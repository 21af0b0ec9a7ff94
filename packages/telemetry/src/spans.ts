import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

export { SpanKind, type Context, type Span };

/** Instrumentation scope of every span of the code base; the service name tells the process. */
const tracer = () => trace.getTracer('switchboard');

/** Whether this process started tracing (`startTracing`); false until then and after its shutdown. */
let started = false;
/** For `startTracing` only. */
export const setTracingStarted = (on: boolean): void => {
  started = on;
};
/** Whether this process traces: when false, nothing carries a trace context anywhere. */
export const tracingStarted = (): boolean => started;

/**
 * The W3C `traceparent` of the active span (what the outbox stores with an event, what a job
 * carries), or null when there is none: tracing off (answered at once, no work done), or
 * nothing sampled.
 */
export function currentTraceparent(ctx?: Context): string | null {
  if (!started) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx ?? context.active(), carrier);
  return carrier.traceparent ?? null;
}

/**
 * A context whose parent is the given `traceparent`, or the root context when it is absent
 * or malformed (the propagator ignores what it cannot parse: never an error).
 */
export function contextFromTraceparent(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** Headers carrying the active span's context to another service (W3C traceparent). */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent; the active context when absent. */
  parent?: Context;
}

/**
 * Runs `fn` in a new active span that ends when `fn` settles; a thrown error is recorded
 * on the span and rethrown. With tracing off the span is a no-op.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer().startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    parent,
    async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** Starts a span the caller ends (a request's server span), with its context. */
export function startSpan(name: string, options: SpanOptions): { span: Span; context: Context } {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `fn` with `ctx` as the active context. */
export const withContext = <T>(ctx: Context, fn: () => T): T => context.with(ctx, fn);

/** Marks a span failed (without an exception), e.g. a 5xx answer or a refused delivery. */
export function markFailed(span: Span, message?: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** The trace id of the active span, for log lines; null when not recording. */
export function currentTraceId(ctx: Context = context.active()): string | null {
  const span = trace.getSpan(ctx);
  return span?.isRecording() ? span.spanContext().traceId : null;
}
