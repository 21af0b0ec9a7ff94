import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import fc from 'fast-check';
import { createLogger } from '@switchboard/logger';
import { answerClientErrors } from '../../apps/api/src/http/client-errors';
import { errorBodyChecker, responseChecker } from '../support/openapi-responses';
import { anyCase, toRequest, type FuzzCase } from './cases';
import type { OpenApiDoc, Operation } from './operations';
import { send } from './requests';
import type { World } from './world';

/** Something a fuzzed request broke: a 5xx, a hang, an undocumented answer, a wrong shape. */
export interface Finding {
  operationId: string;
  problem: string;
  request: string;
  status: number;
  body: string;
}

export interface FuzzReport {
  requests: number;
  seed: number;
  durationMs: number;
  /** Slowest answers, ms. */
  p99Ms: number;
  maxMs: number;
  byStatus: Record<string, number>;
  byOperation: Record<string, number>;
  findings: Finding[];
}

const KEYED: ReadonlySet<string> = new Set([
  'required',
  'admin',
  'lower',
  'revoked',
  'portal',
  'portalView',
]);

/** What every answer must be, whatever was asked (docs/API.md, Errors; the document). */
function problemsOf(
  c: FuzzCase,
  res: { status: number; headers: Record<string, string>; body: unknown; text: string },
  checks: {
    error: (body: unknown) => string | null;
    response: ReturnType<typeof responseChecker>;
    plainError: (op: Operation, status: number) => boolean;
    /** Whether the document says this answer carries the RateLimit fields. */
    rateLimited: (op: Operation, status: number) => boolean;
  },
): string[] {
  const out: string[] = [];
  const { status } = res;
  if (status >= 500) out.push(`${status}: a server error`);
  if (!c.op.statuses.has(status)) out.push(`${status} is not documented for this operation`);
  if (!res.headers['x-request-id']) out.push('no X-Request-Id');
  const json = /^application\/json/.test(res.headers['content-type'] ?? '');
  if (status >= 400) {
    if (!json) out.push(`an error that is not JSON (${res.headers['content-type']})`);
    else if (checks.plainError(c.op, status)) {
      const wrong = checks.error(res.body);
      if (wrong) out.push(`an error body that is not the Error component: ${wrong}`);
    } else {
      // Documented as the Error component or another body (MCP's JSON-RPC errors).
      try {
        checks.response(c.op.method, c.op.path, status, res.body);
      } catch (err) {
        out.push((err as Error).message.split('\n')[0] as string);
      }
    }
    if ([429, 503].includes(status) && !res.headers['retry-after']) out.push('no Retry-After');
  } else if (json && status !== 204) {
    try {
      checks.response(c.op.method, c.op.path, status, res.body);
    } catch (err) {
      out.push((err as Error).message.split('\n')[0] as string);
    }
  }
  // A path the router cannot decode is refused before the key is read.
  const code = (res.body as { error?: { code?: string } } | null)?.error?.code;
  const known = KEYED.has(c.auth) && c.auth !== 'revoked' && code !== 'invalid_path';
  if (
    known &&
    status < 500 &&
    checks.rateLimited(c.op, status) &&
    !(res.headers.ratelimit && res.headers['ratelimit-policy'])
  ) {
    out.push('an answer to a known key without RateLimit and RateLimit-Policy');
  }
  return out;
}

const describe = (c: FuzzCase, url: string, body: unknown): string =>
  `${c.op.method.toUpperCase()} ${url.slice(0, 300)} auth=${c.auth} ` +
  `headers=${JSON.stringify(c.headers).slice(0, 200)} body=${String(body ?? '').slice(0, 300)}`;

/**
 * Sends `requests` generated requests (seeded: the same seed makes the same requests) to a
 * server of `app`, `concurrency` at a time, and reports every broken answer.
 */
export async function runFuzz(opts: {
  app: Express;
  doc: OpenApiDoc;
  operations: Operation[];
  world: World;
  requests: number;
  seed: number;
  concurrency?: number;
  onProgress?: (done: number) => void;
}): Promise<FuzzReport> {
  const g = { world: opts.world };
  const cases = fc.sample(anyCase(g, opts.operations), { numRuns: opts.requests, seed: opts.seed });
  const checks = {
    error: errorBodyChecker(opts.doc),
    response: responseChecker(opts.doc),
    // Every error is the Error component, but where the document says otherwise.
    plainError: (op: Operation, status: number) => {
      const responses = opts.doc.paths[op.path]?.[op.method]?.responses as
        Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> | undefined;
      const schema = responses?.[String(status)]?.content?.['application/json']?.schema;
      return !schema || schema.$ref === '#/components/schemas/Error';
    },
    rateLimited: (op: Operation, status: number) => {
      const responses = opts.doc.paths[op.path]?.[op.method]?.responses as
        Record<string, { headers?: Record<string, unknown> }> | undefined;
      return Boolean(responses?.[String(status)]?.headers?.['RateLimit']);
    },
  };
  // As apps/api/src/server.ts serves it: what the HTTP parser refuses is answered as JSON.
  const server: Server = createServer(opts.app);
  answerClientErrors(server, createLogger('fuzz', 'silent'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const report: FuzzReport = {
    requests: cases.length,
    seed: opts.seed,
    durationMs: 0,
    p99Ms: 0,
    maxMs: 0,
    byStatus: {},
    byOperation: {},
    findings: [],
  };
  const times: number[] = [];
  const started = Date.now();
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (let i = next++; i < cases.length; i = next++) {
      const c = cases[i] as FuzzCase;
      const req = toRequest(c, g);
      const t0 = Date.now();
      const finding = (problem: string, status = 0, body = '') =>
        report.findings.push({
          operationId: c.op.operationId,
          problem,
          request: describe(c, req.url, req.body),
          status,
          body,
        });
      try {
        const res = await send(server, req, 10_000);
        times.push(Date.now() - t0);
        report.byStatus[res.status] = (report.byStatus[res.status] ?? 0) + 1;
        const body = res.text?.slice(0, 500) ?? '';
        const answer = {
          status: res.status,
          headers: res.headers as Record<string, string>,
          body: res.body as unknown,
          text: res.text,
        };
        for (const problem of problemsOf(c, answer, checks)) {
          finding(problem, res.status, body);
        }
      } catch (err) {
        times.push(Date.now() - t0);
        const e = err as { timeout?: number; message?: string; code?: string };
        finding(
          e.timeout
            ? 'no answer within 10 s (a hang)'
            : `the connection failed: ${e.code ?? e.message}`,
        );
      }
      report.byOperation[c.op.operationId] = (report.byOperation[c.op.operationId] ?? 0) + 1;
      opts.onProgress?.(++done);
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker));
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  times.sort((a, b) => a - b);
  report.durationMs = Date.now() - started;
  report.p99Ms = times[Math.floor(times.length * 0.99)] ?? 0;
  report.maxMs = times[times.length - 1] ?? 0;
  return report;
}
