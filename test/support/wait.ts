/**
 * Waits until `check` returns a value (not undefined/false), re-checking every `intervalMs`
 * up to `timeoutMs`; then fails with `what`. Bounded: never an open-ended loop. The default
 * detects a hang; it is no bound on speed: a loaded machine may take many times longer than
 * a quiet one (docs/decisions/0052-a-suite-that-holds-on-a-busy-machine.md).
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 45_000, intervalMs = 25 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
