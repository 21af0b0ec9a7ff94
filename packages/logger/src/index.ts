import pino, { type Logger } from 'pino';
import { currentLogFields } from './context';

export type { Logger };
export { addLogContext, currentLogFields, withLogContext, type LogFields } from './context';
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
  const options = {
    name,
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    mixin: currentLogFields,
  };
  return destination ? pino(options, destination) : pino(options);
}
