import { spawn, spawnSync, execFile, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { verifyWebhook } from '@switchboard/sdk';
import { PORTAL_DIST } from '../../apps/api/src/features/portal/page';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { SERVICES } from '../../scripts/services';
import { ROOT, bareEnv, freePort } from '../support/api-process';
import { killOnExit } from '../support/children';
import { createTestContext, type TestContext } from '../support/context';
import { redisEnv, testEnv } from '../support/env';
import { waitFor } from '../support/wait';
import { receptionistTenant } from '../support/receptionist';

// The Docker image's steps without Docker (docker/Dockerfile): the manifests, `npm ci
// --omit=dev` as its prod-deps stage runs it, the compiled services where its runtime stage
// copies them, then the compiled API and worker carry one outbound call's webhook to an HTTPS
// receiver on 127.0.0.1, and the compiled API serves the portal's page where the image has it.
const run = promisify(execFile);
const DOCKERFILE = readFileSync(resolve(ROOT, 'docker/Dockerfile'), 'utf8');
const stage = (name: string): string => {
  const at = DOCKERFILE.search(new RegExp(`^FROM \\S+ AS ${name}$`, 'm'));
  if (at < 0) throw new Error(`docker/Dockerfile has no ${name} stage`);
  const rest = DOCKERFILE.slice(at + 1);
  const next = rest.search(/^FROM /m);
  return next < 0 ? rest : rest.slice(0, next);
};
/** `npm ci ...` of the prod-deps stage, as words. */
const PROD_INSTALL = /(npm ci[^\n\\&]*)/.exec(stage('prod-deps'))?.[1]?.trim().split(/\s+/) ?? [];
/** What the runtime stage copies from the build stage (paths inside /app). */
const COPIED = [...stage('runtime').matchAll(/^COPY --from=build \/app\/(\S+) /gm)].map(
  (m) => m[1]!,
);

const IMAGE = mkdtempSync(join(tmpdir(), 'sb-image-'));
const children: ChildProcess[] = [];

function manifests(): void {
  for (const f of ['package.json', 'package-lock.json', '.npmrc'])
    cpSync(join(ROOT, f), join(IMAGE, f));
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(join(ROOT, group))) {
      const file = join(group, name, 'package.json');
      if (existsSync(join(ROOT, file))) cpSync(join(ROOT, file), join(IMAGE, file));
    }
  }
}

function startCompiled(
  entry: string,
  env: Record<string, string>,
): {
  proc: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
} {
  const proc = spawn(process.execPath, [join(IMAGE, entry)], {
    cwd: IMAGE,
    env: { ...bareEnv(), NODE_ENV: 'production', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  killOnExit(proc);
  children.push(proc);
  let stderr = '';
  proc.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return { proc, stderr: () => stderr, exited };
}

beforeAll(async () => {
  expect(PROD_INSTALL).toEqual(['npm', 'ci', '--omit=dev']);
  expect(COPIED.length).toBeGreaterThan(0);
  manifests();
  // From the npm cache where it can (the workspace's own install filled it).
  await run('npm', [...PROD_INSTALL.slice(1), '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: IMAGE,
  });
  // The build stage's `npm run build -- services` is what the global setup ran into the
  // repository, from this run's sources (scripts/bundle.ts, test/support/bundles.ts); its
  // `npm run portal:build` makes the same page for every checkout.
  if (!existsSync(join(PORTAL_DIST, 'index.html'))) {
    const built = spawnSync('npm', ['run', '--silent', 'portal:build'], { stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run portal:build failed');
  }
  // The runtime stage's COPY --from=build lines.
  for (const dir of COPIED) cpSync(join(ROOT, dir), join(IMAGE, dir), { recursive: true });
}, 240_000);

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(IMAGE, { recursive: true, force: true });
});

it('installs production dependencies only, and the build makes what the image copies', () => {
  for (const dev of ['tsx', 'jest', 'esbuild', 'tsup', 'eslint']) {
    expect([dev, existsSync(join(IMAGE, 'node_modules', dev))]).toEqual([dev, false]);
  }
  // Every service `npm run build -- services` compiles, and the portal's page: nothing else.
  expect([...COPIED].sort()).toEqual(
    [...new Set(Object.values(SERVICES).map((f) => dirname(f))), 'apps/portal/dist'].sort(),
  );
  for (const dir of COPIED)
    expect(readdirSync(join(IMAGE, dir))).toContainEqual(
      expect.stringMatching(/\.js$|^index\.html$/),
    );
  expect(existsSync(join(IMAGE, 'apps/api/src'))).toBe(false);
});

it('a compiled service without its settings names the missing one and exits non-zero', async () => {
  // Both at once: each process's start is most of the time this takes.
  const api = startCompiled('apps/api/dist/server.js', { PORT: String(await freePort()) });
  const worker = startCompiled('apps/worker/dist/main.js', {});
  expect(await Promise.all([api.exited, worker.exited])).toEqual([1, 1]);
  expect(api.stderr()).toMatch(/configuration error: [A-Z_]+ is missing/);
  expect(worker.stderr()).toMatch(/configuration error: [A-Z_]+ is missing/);
}, 120_000);

describe('the compiled API and worker', () => {
  let ctx: TestContext;
  let receiver: TestReceiver;
  let env: Record<string, string>;

  beforeAll(async () => {
    ctx = await createTestContext();
    const cert = generateCertificate('IP:127.0.0.1');
    receiver = await startReceiver(cert, { '/hooks': (_q, res) => res.writeHead(204).end() });
    writeFileSync(join(IMAGE, 'receiver-ca.pem'), cert.cert);
    env = {
      ...testEnv({
        DATABASE_URL: ctx.config.databaseUrl,
        ...redisEnv(ctx.config.redis),
        QUEUE_PREFIX: ctx.config.queuePrefix,
      }),
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      // Not the default 9465: another API on this host may hold it, and this one would exit.
      API_METRICS_PORT: String(await freePort()),
      SIMULATOR_SPEED: '20',
      NODE_EXTRA_CA_CERTS: join(IMAGE, 'receiver-ca.pem'),
      // The receiver is on 127.0.0.1, which takes WEBHOOK_ALLOW_PRIVATE_TARGETS=true (testEnv),
      // a development setting that NODE_ENV=production refuses (production-settings.test.ts).
      NODE_ENV: 'development',
    };
  });
  afterAll(async () => {
    await receiver?.close();
    await ctx?.close();
  });

  it('carry an outbound call to a signed webhook delivery', async () => {
    const api = startCompiled('apps/api/dist/server.js', env);
    const worker = startCompiled('apps/worker/dist/main.js', env);
    const base = `http://127.0.0.1:${env.PORT}/api/v1`;
    await waitFor(
      'the compiled API to answer /readyz',
      async () => {
        if (api.proc.exitCode !== null) throw new Error(`the API exited:\n${api.stderr()}`);
        return fetch(`${base.replace('/api/v1', '')}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        // A positive signal, not a time budget: start-up takes seconds on a loaded machine.
      },
      { timeoutMs: 90_000, intervalMs: 100 },
    );
    // The page a portal link opens, from the image's apps/portal/dist.
    const page = await fetch(`${base.replace('/api/v1', '')}/portal`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = /src="(\/portal\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect((await fetch(`${base.replace('/api/v1', '')}${script}`)).status).toBe(200);
    const { auth, rcp } = await receptionistTenant(ctx, { phoneNumber: '+14155550142' });
    const post = (path: string, body: object) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          authorization: auth,
          'content-type': 'application/json',
          'idempotency-key': `k-${path}`,
        },
        body: JSON.stringify(body),
      });
    const sub = await post('/webhooks', {
      url: `https://127.0.0.1:${receiver.port}/hooks`,
      events: ['call.started'],
    });
    expect(sub.status).toBe(201);
    const { signing_secret: secret } = (await sub.json()) as { signing_secret: string };
    const call = await post('/calls/outbound', { receptionist_id: rcp, to: '+14155550123' });
    expect(call.status).toBe(202);
    const { id: callId } = (await call.json()) as { id: string };

    await waitFor(
      'the call.started delivery',
      () => {
        if (worker.proc.exitCode !== null)
          throw new Error(`the worker exited:\n${worker.stderr()}`);
        return receiver.requests.length > 0;
      },
      { timeoutMs: 90_000, intervalMs: 100 },
    );
    const delivery = receiver.requests[0]!;
    const event = verifyWebhook(delivery.body, delivery.headers, secret);
    expect(event.event).toBe('call.started');
    expect((event.data as { call_id: string }).call_id).toBe(callId);

    api.proc.kill('SIGTERM');
    worker.proc.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    expect(await worker.exited).toBe(0);
  }, 240_000);
});
