import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { docUrlOf, ERROR_CODES, ERROR_DOCS } from '../../apps/api/src/error-codes';

// docs/API.md's error table is where clients learn the codes to branch on: every code the API
// can raise must be in it. The codes are collected from the source, where an error is made
// (`new ApiError(status, type, 'code', …)` and the functions that take a code), so a new code
// without a row fails here.
const ROOT = join(__dirname, '../..');
const API_SRC = join(ROOT, 'apps/api/src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const MADE = [
  /new ApiError\(\s*\d{3},\s*'[a-z_]+',\s*'([a-z_]+)'/g,
  /\b(?:conflict|unprocessable|unauthenticated)\(\s*'([a-z_]+)'/g,
];

const codesInSource = (): string[] => {
  const codes = new Set<string>();
  for (const file of sourceFiles(API_SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of MADE) for (const m of text.matchAll(pattern)) codes.add(m[1] as string);
  }
  return [...codes].sort();
};

/** The `## Errors` section of docs/API.md, up to the next section. */
const errorsSection = (): string => {
  const doc = readFileSync(join(ROOT, 'docs/API.md'), 'utf8');
  const start = doc.indexOf('\n## Errors\n');
  expect(start).toBeGreaterThan(0);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
};

it('finds the codes in the source (the collection itself works)', () => {
  expect(codesInSource()).toEqual(
    expect.arrayContaining([
      'invalid_parameter',
      'resource_not_found',
      'idempotency_key_reused',
      'idempotency_request_in_progress',
      'lead_exists',
      'recipient_opted_out',
      'rate_limited',
      'internal_error',
    ]),
  );
});

it('lists every error code in the error table of docs/API.md', () => {
  const section = errorsSection();
  const missing = codesInSource().filter((code) => !section.includes(`\`${code}\``));
  expect(missing).toEqual([]);
});

it('lists every error code in ERROR_CODES (the enum of the document, the SDK ErrorCode), and only those of the table', () => {
  const listed = new Set<string>(ERROR_CODES);
  expect(codesInSource().filter((code) => !listed.has(code))).toEqual([]);
  const section = errorsSection();
  expect(ERROR_CODES.filter((code) => !section.includes(`\`${code}\``))).toEqual([]);
});

// Every error body carries `doc_url` (docUrlOf: test/api/errors.test.ts checks the bodies), the
// anchor of its code among the Error codes of docs/API.md: each code must have its anchor.
it('has the anchor of every error code in docs/API.md, the target of its doc_url', () => {
  const section = errorsSection();
  const anchors = new Set(
    [...section.matchAll(/<a id="error-([a-z_]+)"><\/a>/g)].map((m) => m[1] as string),
  );
  expect(ERROR_CODES.filter((code) => !anchors.has(code))).toEqual([]);
  // And only of codes that exist: a removed code's entry goes with it.
  const known = new Set<string>(ERROR_CODES);
  expect([...anchors].filter((code) => !known.has(code))).toEqual([]);
  for (const code of ERROR_CODES) {
    const [path, anchor] = docUrlOf(code).split('#');
    expect(path).toBe(ERROR_DOCS);
    expect(anchor).toBe(`error-${code}`);
  }
  expect(join(ROOT, ERROR_DOCS)).toBe(join(ROOT, 'docs/API.md'));
});
