import { useState } from 'preact/hooks';
import { ApiFailure } from './api';
import { plain } from './format';

/**
 * A page's failure to load or act, read one way everywhere: the session's own failures
 * (`onFailure`: an ended session, a lost link) first; then a status that means the subject is
 * not there for this link (the page shows its not-found state); else a message to show.
 */
export function useLoadFailure(
  onFailure: (err: unknown) => boolean,
  missingStatuses: readonly number[],
) {
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const fail = (err: unknown): void => {
    if (onFailure(err)) return;
    if (err instanceof ApiFailure && missingStatuses.includes(err.status)) setMissing(true);
    else setError(plain(err));
  };
  return { missing, error, setError, fail };
}
