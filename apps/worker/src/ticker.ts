import type { Logger } from '@switchboard/logger';
import type { Component } from './component';

/**
 * Runs `tick` every `intervalMs`, never two at once (a slow tick skips the next beats), and
 * logs a failed tick instead of crashing: the next one retries. Closing waits for a tick in
 * flight.
 */
export function startTicker(
  name: string,
  intervalMs: number,
  logger: Logger,
  tick: () => Promise<void>,
): Component {
  let stopped = false;
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (stopped || running) return;
    running = tick()
      .catch((err: unknown) => logger.warn({ err }, `${name} tick failed`))
      .finally(() => {
        running = null;
      });
  }, intervalMs);
  return {
    name,
    async close() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
