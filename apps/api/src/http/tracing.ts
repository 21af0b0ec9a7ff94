import type { RequestHandler } from 'express';
import { addLogContext } from '@switchboard/logger';
import {
  contextFromTraceparent,
  currentTraceId,
  markFailed,
  SpanKind,
  startSpan,
  withContext,
} from '@switchboard/telemetry';
import { routeTemplate } from '../metrics/middleware';

/**
 * The request's server span. It continues the caller's trace when the request carries a
 * valid W3C `traceparent` (one that does not parse is ignored: a new trace, never an error),
 * runs the rest of the request in its context (the outbox write of an event joins it), and
 * is named after the route template once the answer is written. With tracing off the span
 * is a no-op. Log lines of the request carry its `trace_id` when it is recorded.
 */
export const httpTracing: RequestHandler = (req, res, next) => {
  const header = req.headers.traceparent;
  const { span, context } = startSpan(req.method, {
    kind: SpanKind.SERVER,
    parent: contextFromTraceparent(typeof header === 'string' ? header : undefined),
    attributes: {
      'http.request.method': req.method,
      'url.path': req.path,
      'switchboard.request_id': req.requestId,
    },
  });
  // Not recording (tracing off, or not sampled): ending it or naming it does nothing, so
  // the answer is not watched; its context still carries the caller's trace onwards.
  if (span.isRecording()) {
    // A ServerResponse always emits 'close' last, after 'finish' when the answer ended.
    res.on('close', () => {
      const route = routeTemplate(req);
      span.updateName(`${req.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) markFailed(span);
      span.end();
    });
  }
  withContext(context, () => {
    const traceId = currentTraceId();
    if (traceId) addLogContext({ trace_id: traceId });
    next();
  });
};
