import type { RequestHandler } from 'express';
import { fixedFieldLogger, type Logger } from '@switchboard/logger';

/**
 * One line per request once its answer is finished or cut off, at `info`:
 * `{req: {method, url}, res: {statusCode}, responseTime}` with `request completed`,
 * `request aborted` (the answer was not fully written) or, for a 5xx, `request errored`
 * with an `err`. `request_id`, `tenant_id` and `key_id` come from the log context
 * (http/request-id.ts): the listener is added inside it, so the line carries the fields
 * of its own request. When `info` is off nothing is done per request (no listener, no
 * child logger, no serialization): the cost of a line is paid only by lines written.
 */
export function accessLog(redacted: Logger): RequestHandler {
  // Every field of the line is set here, none can hold a credential: no redaction pass.
  const logger = fixedFieldLogger(redacted);
  return (req, res, next) => {
    if (!logger.isLevelEnabled('info')) {
      next();
      return;
    }
    const start = Date.now();
    // A ServerResponse always emits 'close' last, after 'finish' when the answer ended.
    res.on('close', () => {
      const line = {
        req: { method: req.method, url: req.originalUrl },
        res: { statusCode: res.statusCode },
        responseTime: Date.now() - start,
      };
      if (res.statusCode >= 500) {
        logger.info(
          { ...line, err: new Error(`failed with status code ${res.statusCode}`) },
          'request errored',
        );
      } else {
        const ended = !req.readableAborted && res.writableEnded;
        logger.info(line, ended ? 'request completed' : 'request aborted');
      }
    });
    next();
  };
}
