import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');
const REDOCLY = join(ROOT, 'node_modules/.bin/redocly');

/** One finding of the linter. */
export interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn' | 'info' | 'hint';
  message: string;
  location: string;
}

/**
 * Lints an OpenAPI document with Redocly CLI and the rules of redocly.yaml (its recommended
 * set). Telemetry and the update check are off: the linter talks to nothing but the file.
 */
export async function lintOpenApi(document: object): Promise<LintProblem[]> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document, null, 2));
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        REDOCLY,
        ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'],
        {
          cwd: ROOT,
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
          maxBuffer: 32 * 1024 * 1024,
        },
        // Redocly exits 1 when it found errors; the JSON on stdout says what they are.
        (error, out, err) => (out ? resolve(out) : reject(error ?? new Error(err))),
      );
    });
    const report = JSON.parse(stdout) as {
      problems: Array<{
        ruleId: string;
        severity: 'error' | 'warn' | 'info' | 'hint';
        message: string;
        location: Array<{ pointer?: string }>;
      }>;
    };
    return report.problems.map((p) => ({
      ruleId: p.ruleId,
      severity: p.severity,
      message: p.message,
      location: p.location.map((l) => l.pointer ?? '').join(' '),
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
