import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { bareEnv, ROOT, startApiProcess, type ApiProcess } from '../support/api-process';
import { CLI_BUNDLE } from '../support/bundles';
import { killOnExit } from '../support/children';
import { createTestContext, type TestContext } from '../support/context';
import { redisEnv, testEnv } from '../support/env';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { USER_DOCS } from '../support/user-docs';

// Every shell example of the README and the guides runs as written against a started stack
// (a seeded demo tenant, one API process on a port that is not the default, one worker), in
// the order a reader pastes them into one terminal: `bash -euo pipefail`, with B, KEY and H
// set as `npm start` prints them, and every curl answered with a 2xx (curl runs with
// --fail-with-body). A block that cannot run as written carries the marker
// `<!-- not runnable: why -->` on the line right before its opening fence (docs/getting-
// started.md, "Examples in the docs"); an unmarked block that fails fails this test.
const DOCS = USER_DOCS;
const SHELL = new Set(['bash', 'sh', 'shell']);
const MARKER = /^<!-- not runnable: (\S.*?) -->$/;
const run = promisify(execFile);

interface Block {
  where: string;
  lang: string;
  code: string;
  /** The marker's reason, when the block is marked not runnable. */
  notRunnable: string | null;
}

function blocksOf(file: string): Block[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => {
    const before = text.slice(0, m.index).split('\n');
    const previous = (before[before.length - 2] ?? '').trim();
    return {
      where: `${file}:${before.length}`,
      lang: m[1] as string,
      code: m[2] as string,
      notRunnable: MARKER.exec(previous)?.[1] ?? null,
    };
  });
}

const ALL = DOCS.flatMap(blocksOf);
const SHELL_BLOCKS = ALL.filter((b) => SHELL.has(b.lang));
const RUNNABLE = SHELL_BLOCKS.filter((b) => b.notRunnable === null);
/** Every variable a block assigns: carried to the blocks after it, as one terminal would. */
const CARRIED = [
  ...new Set([
    'B',
    'KEY',
    'H',
    ...RUNNABLE.flatMap((b) =>
      [...b.code.matchAll(/^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]),
    ),
  ]),
];

test('a not-runnable marker sits right before a shell block, with its reason', () => {
  const markers = DOCS.flatMap((file) =>
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .filter((line) => line.trim().startsWith('<!-- not runnable')),
  );
  // A marker anywhere else (a stale one, or on a block that is not shell) is a mistake.
  expect(markers.length).toBe(SHELL_BLOCKS.filter((b) => b.notRunnable !== null).length);
  expect(markers.filter((line) => !MARKER.test(line.trim()))).toEqual([]);
  expect(RUNNABLE.length).toBeGreaterThan(SHELL_BLOCKS.length / 2);
});

test('a shell example is labelled as one (an unlabelled block would escape the run)', () => {
  const unlabelled = ALL.filter(
    (b) => b.lang === '' && /^\s*(curl|npm|node|[A-Z_]+=\$?\()\b/m.test(b.code),
  );
  expect(unlabelled.map((b) => b.where)).toEqual([]);
});

describe('the shell examples, run as written against a started stack', () => {
  let ctx: TestContext;
  let api: ApiProcess;
  let worker: WorkerProcess;
  let dir: string;

  beforeAll(async () => {
    ctx = await createTestContext();
    const env = {
      ...process.env,
      ...testEnv({
        DATABASE_URL: ctx.config.databaseUrl,
        QUEUE_PREFIX: ctx.config.queuePrefix,
        ...redisEnv(ctx.config.redis),
      }),
    };
    // What `npm start` does: seed the demo tenant, start one API and one worker (compiled).
    const seeded = await run(process.execPath, [CLI_BUNDLE, 'seed-demo'], { cwd: ROOT, env });
    const key = (JSON.parse(seeded.stdout) as { api_key: { key: string } }).api_key.key;
    api = await startApiProcess(ctx.config);
    worker = await startWorkerProcess(ctx.config, {}, { entry: 'built' });
    expect(new URL(api.baseUrl).port).not.toBe('3000');

    // B= and KEY= exactly as scripts/start.sh prints them, for this stack.
    const start = readFileSync(join(ROOT, 'scripts/start.sh'), 'utf8');
    const printed = (name: string) => {
      const line = new RegExp(`^${name}=(.+)$`, 'm').exec(start)?.[1] ?? '';
      const value = line.replace('${base}', api.baseUrl).replace('${api_key}', key);
      expect(value).not.toMatch(/\$|^$/);
      return value;
    };
    dir = mkdtempSync(join(tmpdir(), 'sb-examples-'));
    writeFileSync(
      join(dir, 'state.sh'),
      `B='${printed('B')}'\nKEY='${printed('KEY')}'\nH="Authorization: Bearer $KEY"\n`,
    );
    // Only a hang detector: seeding and starting two processes on a busy machine.
  }, 180_000);

  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await ctx?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test.each(RUNNABLE.map((b) => [b.where, b] as const))(
    '%s',
    async (_where, block) => {
      const state = join(dir, 'state.sh');
      const log = join(dir, 'curl.log');
      writeFileSync(log, '');
      const script = [
        `cd '${ROOT}'`,
        // Every curl of the block must get a 2xx: a 4xx or 5xx ends the block with exit 22.
        'curl() { printf "%s\\n" "$*" >>"$SB_CURL_LOG"; command curl --fail-with-body "$@"; }',
        `source '${state}'`,
        block.code,
        `for v in ${CARRIED.join(' ')}; do if [[ -v $v ]]; then declare -p "$v"; fi; done >'${state}.next'`,
        `mv '${state}.next' '${state}'`,
      ].join('\n');
      const file = join(dir, 'block.sh');
      writeFileSync(file, script);
      const { code, output } = await bash(file, log);
      if (code !== 0) throw new Error(`${block.where} exited ${code}:\n${output}`);
      const curls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
      if (/\bcurl\b/.test(block.code)) expect(curls.length).toBeGreaterThan(0);
    },
    120_000,
  );
});

/** Runs `file` in `bash -euo pipefail`: its stdout and stderr together, and its exit code. */
function bash(file: string, log: string): Promise<{ code: number | null; output: string }> {
  // Through a pipe, as a terminal would be: `tee /dev/stderr` reopens the block's stderr,
  // which works on a terminal or a pipe but not on the socket a spawned child is given.
  const child = spawn(
    'bash',
    ['-o', 'pipefail', '-c', 'bash -euo pipefail "$0" 2>&1 | cat', file],
    {
      cwd: ROOT,
      env: {
        ...bareEnv(),
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        SB_CURL_LOG: log,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const undo = killOnExit(child);
  let output = '';
  const keep = (c: Buffer) => (output = (output + c.toString()).slice(-8000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  // Only a hang detector (a loop in a block waiting for something that never comes).
  const timer = setTimeout(() => child.kill('SIGKILL'), 110_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      undo();
      resolve({ code, output });
    }),
  );
}
