import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/api-process';
import { USER_DOCS } from '../support/user-docs';

// The examples of the README and the docs pages run as written after `npm start` (which
// prints the B= and KEY= lines they use), whatever PORT it was given, and pasting them one
// after the other never reuses an idempotency key with another body (a 422).
const DOCS = USER_DOCS;

/** The fenced code blocks of a Markdown file, with their language. */
const blocks = (file: string) =>
  [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    file,
    lang: m[1] as string,
    code: m[2] as string,
  }));

test('the shell examples reach the API through $B, not a fixed port', () => {
  const shell = DOCS.flatMap(blocks).filter((b) => b.lang === 'bash');
  const fixed = shell
    .flatMap((b) => b.code.split('\n'))
    .filter((line) => /^\s*curl\b/.test(line) && /127\.0\.0\.1:\d+\/api\//.test(line));
  expect(fixed).toEqual([]);
});

test('the TypeScript and JavaScript examples read the base URL and key from B and KEY', () => {
  const code = DOCS.flatMap(blocks).filter((b) => ['ts', 'js'].includes(b.lang));
  // The webhook receiver's own listen(4000) is not the API's address: only a URL counts.
  const fixed = code
    .flatMap((b) => b.code.split('\n').map((line) => `${b.file}: ${line.trim()}`))
    .filter((line) => /https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?/.test(line));
  expect(fixed).toEqual([]);
  const clients = code.flatMap((b) =>
    [...b.code.matchAll(/new Switchboard\(([^)]*)\)/g)].map((m) => m[1]),
  );
  expect(clients.length).toBeGreaterThan(2);
  expect(
    clients.filter((c) => c !== '{ apiKey: process.env.KEY!, baseUrl: process.env.B! }'),
  ).toEqual([]);
});

test('no idempotency key is shared by two examples', () => {
  const seen = new Map<string, string>();
  const shared: string[] = [];
  DOCS.flatMap(blocks).forEach((b, i) => {
    const keys = [...b.code.matchAll(/Idempotency-Key: ([^'"\s]+)|idempotencyKey: '([^']+)'/g)].map(
      (m) => (m[1] ?? m[2]) as string,
    );
    // Within one example a key repeats on purpose: the retry that replays.
    for (const key of new Set(keys)) {
      const where = `${b.file} block ${i}`;
      const first = seen.get(key);
      if (first) shared.push(`${key}: ${first} and ${where}`);
      else seen.set(key, where);
    }
  });
  expect(seen.size).toBeGreaterThan(2);
  expect(shared).toEqual([]);
});
