import pino, { type Logger } from 'pino';
import { currentLogFields } from './context';

export type { Logger };
export {
  addLogContext,
  currentLogFields,
  currentRequestId,
  withLogContext,
  type LogFields,
} from './context';
export {
  bufferedStdout,
  flushLogger,
  STDOUT_BATCH_BYTES,
  STDOUT_FLUSH_EVERY_MS,
  STDOUT_MAX_HELD_BYTES,
  type BufferedStdout,
} from './stdout';

/**
 * Paths that may carry credentials. pino replaces them before a line is written, so a
 * secret can never reach a log sink even when a whole request or job is logged by mistake.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'signing_secret',
  'secret',
  'key',
  '*.signing_secret',
  '*.secret',
  '*.key',
];

/**
 * One JSON logger per process; `name` says which app wrote the line. Every line also carries
 * the fields of the unit of work it was written in (see context.ts); a field the call itself
 * passes wins.
 */
export function createLogger(
  name: string,
  level = 'info',
  destination?: pino.DestinationStream,
): Logger {
  const options = { name, level, mixin: currentLogFields };
  const redacted = { ...options, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  const logger = destination ? pino(redacted, destination) : pino(redacted);
  const stream = (logger as unknown as Record<symbol, pino.DestinationStream>)[
    pino.symbols.streamSym
  ] as pino.DestinationStream;
  fixedFieldTwins.set(logger, pino(options, stream));
  return logger;
}

/** Each logger made by `createLogger` and its twin without the redaction pass. */
const fixedFieldTwins = new WeakMap<Logger, Logger>();

/**
 * The logger for lines whose every field is set by the code that writes them and can never
 * hold a credential (the access log: method, path, status code, time, and the ids of the
 * log context): `logger`'s name, level, context fields and destination, without the
 * redaction pass, which copies and walks every object of a line (a tenth of what an API
 * request allocates). Any other line, and anything logged by mistake, goes through
 * `logger`, redacted. For a logger not made by `createLogger`, `logger` itself.
 */
export function fixedFieldLogger(logger: Logger): Logger {
  return fixedFieldTwins.get(logger) ?? logger;
}
