import autocannon from 'autocannon';
import { progressBar } from './progress';

/** Stops the run in progress, if any; null between runs. */
let stopRunning: (() => void) | null = null;

/** Stops the autocannon run in progress, if any (for the benchmarks' signal cleanup). */
export function stopCannon(): void {
  stopRunning?.();
}

/**
 * One autocannon run of `duration` seconds with a progress bar on stderr labelled `title`
 * (padded to `labelWidth`). Only one run at a time: `stopCannon` stops it.
 */
export function runCannon(
  title: string,
  opts: autocannon.Options,
  duration: number,
  labelWidth = 44,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const bar = progressBar(title.padEnd(labelWidth), duration, 's');
    let ticks = 0;
    const instance = autocannon(
      { ...opts, duration },
      (err: Error | null, result: autocannon.Result) => {
        bar.update(duration);
        bar.stop();
        stopRunning = null;
        if (err) reject(err);
        else resolve(result);
      },
    );
    stopRunning = () => instance.stop();
    instance.on('tick', () => bar.update(Math.min(duration, ++ticks)));
  });
}
