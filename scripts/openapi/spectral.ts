import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LintProblem } from './lint';

const ROOT = join(__dirname, '../..');
const SPECTRAL = join(ROOT, 'node_modules/.bin/spectral');
/** Spectral's severities, by number: 0 error, 1 warning, 2 information, 3 hint. */
const SEVERITIES = ['error', 'warn', 'info', 'hint'] as const;

/** One result of `spectral lint --format json`. */
interface SpectralResult {
  code: string;
  message: string;
  path: Array<string | number>;
  severity: number;
  source: string;
}

/** A JSON pointer from Spectral's path segments. */
const pointer = (path: ReadonlyArray<string | number>): string =>
  `#/${path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

/**
 * Lints OpenAPI documents with Spectral CLI and the rules of .spectral.yaml (`spectral:oas`),
 * in one run (its start and ruleset load are paid once); the problems of each document, in
 * order. Every result is a problem, hints included: the document is kept clean.
 */
export async function lintWithSpectral(...documents: object[]): Promise<LintProblem[][]> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-spectral-'));
  try {
    const files = documents.map((document, i) => {
      const file = join(dir, `openapi-${i}.json`);
      writeFileSync(file, JSON.stringify(document, null, 2));
      return file;
    });
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        SPECTRAL,
        [
          'lint',
          ...files,
          '--ruleset',
          join(ROOT, '.spectral.yaml'),
          '--format',
          'json',
          '--quiet',
        ],
        { cwd: ROOT, maxBuffer: 32 * 1024 * 1024 },
        // Spectral exits 1 when it found errors; the JSON on stdout says what they are.
        (error, out, err) => (out ? resolve(out) : reject(error ?? new Error(err))),
      );
    });
    const results = JSON.parse(stdout) as SpectralResult[];
    return files.map((file) =>
      results
        .filter((r) => r.source === file)
        .map((r) => ({
          ruleId: r.code,
          severity: SEVERITIES[r.severity] ?? 'error',
          message: r.message,
          location: pointer(r.path),
        })),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
