/** A timestamp in the reader's locale, or a dash. */
export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString() : '—';

/** What went wrong, in words for the page (the API's message says it already). */
export const plain = (err: unknown): string =>
  err instanceof Error ? err.message : 'Something went wrong; try again.';
