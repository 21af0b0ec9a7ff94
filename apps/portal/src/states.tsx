/** Why the page cannot go on: each has its own plain-language page. */
export type Fatal = 'used' | 'expired' | 'invalid' | 'nolink';

const TEXT: Record<Fatal, { title: string; body: string }> = {
  used: {
    title: 'This link was already used',
    body:
      'Each portal link opens once. Ask the person who sent it for a new link; ' +
      'nothing was changed.',
  },
  expired: {
    title: 'This link expired',
    body:
      'Portal links work for a limited time, and can be switched off by your provider. ' +
      'Ask for a new link; nothing was changed.',
  },
  invalid: {
    title: 'This link is not valid',
    body: 'The link may be incomplete. Open the whole link you were sent, or ask for a new one.',
  },
  nolink: {
    title: 'Open your portal link',
    body: 'This page opens from a portal link sent by your provider. Open that link to continue.',
  },
};

/** Reads the exchange's refusal: the API says whether the code was used or has expired. */
export const fatalOfCode = (message: string): Fatal =>
  /already used/i.test(message) ? 'used' : /expired|revoked/i.test(message) ? 'expired' : 'invalid';

export function FatalPage({ reason }: { reason: Fatal }) {
  const t = TEXT[reason];
  return (
    <main class="page narrow" id="main" data-state={reason}>
      <h1>{t.title}</h1>
      <p>{t.body}</p>
    </main>
  );
}

export function NotFound({ what }: { what: string }) {
  return (
    <section aria-labelledby="nf-title" data-state="not-found">
      <h2 id="nf-title">{what} not found</h2>
      <p>
        It may have been deleted, or this link does not give access to it.{' '}
        <a href="#/">Back to your endpoints</a>
      </p>
    </section>
  );
}

export function ErrorNote({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

/** A page whose subject is still loading (with the reason, if loading it failed). */
export function Loading({ error }: { error: string | null }) {
  return (
    <section aria-busy="true">
      <ErrorNote message={error} />
      <p>Loading…</p>
    </section>
  );
}
