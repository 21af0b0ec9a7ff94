import { Presets, SingleBar } from 'cli-progress';

/** Everything a benchmark says while it runs goes to stderr; stdout stays for the result. */
export const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/**
 * A progress bar on stderr. On a terminal it redraws in place; when stderr is a file or a
 * pipe (a run in the background) it prints one line every few seconds instead.
 */
export function progressBar(label: string, total: number, unit: string): SingleBar {
  const bar = new SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {duration_formatted} | ETA {eta_formatted}{note}`,
      stream: process.stderr,
      hideCursor: true,
      noTTYOutput: true,
      notTTYSchedule: 5000,
      etaBuffer: 50,
      fps: 5,
    },
    Presets.shades_classic,
  );
  bar.start(total, 0, { note: '' });
  return bar;
}

export const seconds = (sinceMs: number): string =>
  `${((Date.now() - sinceMs) / 1000).toFixed(1)} s`;

/** Runs one step, saying when it starts and how long it took. */
export async function step<T>(label: string, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  log(`» ${label}…`);
  const result = await run();
  log(`  ${label}: done in ${seconds(started)}`);
  return result;
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));
