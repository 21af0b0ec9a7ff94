import type { ChildProcess } from 'node:child_process';

/**
 * SIGKILLs `child` (its whole process group when `group`) if this process exits first, so
 * that a failed or interrupted test run never leaves servers behind. Returns the undo, for
 * the normal stop path.
 */
export function killOnExit(child: ChildProcess, group = false): () => void {
  const kill = () => {
    try {
      // A group outlives its leader (tsx's CLI runs the program in a child): always try it.
      const alive = child.exitCode === null && child.signalCode === null;
      if (child.pid && (group || alive)) process.kill(group ? -child.pid : child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  process.on('exit', kill);
  return () => process.off('exit', kill);
}

/** Resolves when `child` has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}
