/** A positive integer from the environment (a scenario's count), `fallback` when unset. */
export function intEnv(name: string, fallback: number): number {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}

export const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
