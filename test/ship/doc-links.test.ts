import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

// Every relative link of every Markdown file of the repository resolves: to a file or folder
// that exists inside the repository and, for a `#anchor` into a Markdown file (or `#anchor`
// alone, into the same file), to one of its headings by GitHub's slug rules. Links to other
// sites are not followed; links inside code (fenced blocks, `spans`) are not links.
const ROOT = resolve(__dirname, '../..');
/** Folders that hold no documentation of ours: dependencies, builds, local state. */
const SKIP = new Set([
  'node_modules',
  '.git',
  'dist',
  '.tools',
  '.dev',
  'coverage',
  'test-output',
  '.results',
]);

function markdownFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...markdownFiles(path));
    else if (entry.isFile() && entry.name.endsWith('.md')) found.push(path);
  }
  return found;
}

/** Tells, line by line, whether a line opens, closes or lies inside a fenced code block. */
function fenceTracker(): (line: string) => boolean {
  let fence: string | null = null;
  return (line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && open) {
      fence = open.charAt(0).repeat(open.length);
      return true;
    }
    if (fence !== null && line.trim().startsWith(fence)) {
      fence = null;
      return true;
    }
    return fence !== null;
  };
}

/** The file's lines outside fenced code blocks and code spans (blank in their place). */
function proseLines(text: string): string[] {
  const inCode = fenceTracker();
  return text
    .split('\n')
    .map((line) => (inCode(line) ? '' : line.replace(/(`+)(?:(?!\1).)+?\1/g, '')));
}

/** GitHub's heading anchor: lower case, punctuation dropped, each space a '-'. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text only
    .replace(/<[^>]+>/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const anchorsCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  const cached = anchorsCache.get(file);
  if (cached) return cached;
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const inCode = fenceTracker();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (inCode(line)) continue;
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug((heading[1] ?? '').replace(/`/g, ''));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const html of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(html[1] ?? '');
  }
  anchorsCache.set(file, anchors);
  return anchors;
}

/** Inline links and images `[text](target)`, and reference definitions `[label]: target`. */
function linkTargets(line: string): string[] {
  const targets: string[] = [];
  for (const m of line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g))
    targets.push(m[1] ?? '');
  const reference = /^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s.*)?$/.exec(line);
  if (reference?.[1]) targets.push(reference[1]);
  return targets;
}

/** Why a relative link from `file` does not resolve, or null when it does. */
function brokenLink(file: string, target: string): string | null {
  if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null;
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = decodeURIComponent(pathPart.split('?')[0] ?? '');
  const resolved = path === '' ? file : resolve(dirname(file), path);
  if (resolved !== ROOT && !resolved.startsWith(ROOT + sep)) return 'points outside the repository';
  if (!existsSync(resolved)) return 'no such file';
  if (anchor === undefined || anchor === '') return null;
  if (!statSync(resolved).isFile() || !resolved.endsWith('.md')) return null;
  return anchorsOf(resolved).has(decodeURIComponent(anchor).toLowerCase())
    ? null
    : `no heading #${anchor} in ${relative(ROOT, resolved)}`;
}

it('finds the Markdown files to check', () => {
  const files = markdownFiles(ROOT).map((f) => relative(ROOT, f));
  expect(files).toEqual(
    expect.arrayContaining(['README.md', 'ARCHITECTURE.md', join('docs', 'API.md')]),
  );
});

it('resolves every relative link of every Markdown file, anchors included', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of markdownFiles(ROOT)) {
    proseLines(readFileSync(file, 'utf8')).forEach((line, i) => {
      for (const target of linkTargets(line)) {
        checked += 1;
        const why = brokenLink(file, target);
        if (why) broken.push(`${relative(ROOT, file)}:${i + 1}: ${target} (${why})`);
      }
    });
  }
  expect(checked).toBeGreaterThan(0);
  expect(broken).toEqual([]);
});

it('reads anchors as GitHub makes them', () => {
  expect(slug('Reliability: fuzzing, isolation sweeps, chaos')).toBe(
    'reliability-fuzzing-isolation-sweeps-chaos',
  );
  expect(slug('Telephony ingestion (internal)')).toBe('telephony-ingestion-internal');
  expect(slug('The TelephonyProvider interface')).toBe('the-telephonyprovider-interface');
  expect(slug('Postgres → Citus')).toBe('postgres--citus');
  expect(slug('Results (bench/.results/leads-2026.json)')).toBe(
    'results-benchresultsleads-2026json',
  );
  expect(brokenLink(join(ROOT, 'README.md'), 'docs/nothing-here.md')).toBe('no such file');
  expect(brokenLink(join(ROOT, 'README.md'), '#no-such-heading-anywhere')).toMatch(/no heading/);
  expect(brokenLink(join(ROOT, 'README.md'), '../outside.md')).toBe(
    'points outside the repository',
  );
  expect(brokenLink(join(ROOT, 'README.md'), 'https://example.com/x.md#y')).toBeNull();
});
