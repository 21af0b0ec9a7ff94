import { execFile, execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { ROOT } from '../support/api-process';
import { sdkTarball } from '../support/sdk-tarball';
import { createTestContext, type TestContext } from '../support/context';
import { startTestWorker, type TestWorker } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';

// The SDK as a consumer gets it: `npm pack` (once per run, test/support/sdk-tarball.ts), the tarball installed into a new project outside
// the workspace, a program compiled with the defaults of `tsc --init` of the TypeScript this
// repository pins (strict, verbatimModuleSyntax, module nodenext), then run by plain node, as
// ESM and as CommonJS, on this Node and on the machine's Node 20 when there is one, against a
// running API and worker; it takes `Call` from the types-only entry point `@switchboard/sdk/types`
// (the portal's). publint and @arethetypeswrong/cli check the same tarball, both entry points.
const run = promisify(execFile);
const BIN = join(ROOT, 'node_modules', '.bin');
const PROJECT = mkdtempSync(join(tmpdir(), 'sb-consumer-'));
const PROGRAM = readFileSync(resolve(__dirname, 'consumer/program.ts.txt'), 'utf8');
/** Node 20 (the oldest the SDK supports), where the machine has one apart from this Node. */
const NODE_20 = ['/usr/bin/node', '/usr/local/bin/node'].find(
  (p) => existsSync(p) && p !== process.execPath,
);

let tarball: string;
let ctx: TestContext;
let worker: TestWorker;
let receiver: TestReceiver;
let api: Server;
let deliveries: Server;
let constants: Record<string, string>;

beforeAll(async () => {
  tarball = await sdkTarball();
  const app = join(PROJECT, 'app');
  mkdirSync(app);
  await run('npm', ['init', '-y'], { cwd: app });
  await run(join(BIN, 'tsc'), ['--init'], { cwd: app });
  // The tarball only: the SDK has no dependencies, so nothing comes from the network.
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: app });

  const cert = generateCertificate('IP:127.0.0.1');
  receiver = await startReceiver(cert, { '/hooks': (_q, res) => res.writeHead(204).end() });
  ctx = await createTestContext({ SIMULATOR_SPEED: '50' }, { webhookCa: cert.cert });
  api = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => api.once('listening', r));
  // What the receiver got, for the program to verify (it has no CA of the receiver's).
  deliveries = createServer((_q, res) =>
    res.end(JSON.stringify(receiver.requests.map((r) => ({ body: r.body, headers: r.headers })))),
  ).listen(0, '127.0.0.1');
  await new Promise((r) => deliveries.once('listening', r));
  const { auth, key, rcp } = await receptionistTenant(ctx, {
    phoneNumber: '+14155550177',
  });
  const baseUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const sub = await fetch(`${baseUrl}/api/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      url: `https://127.0.0.1:${receiver.port}/hooks`,
      events: ['call.started'],
    }),
  });
  expect(sub.status).toBe(201);
  constants = {
    API_KEY: key,
    BASE_URL: baseUrl,
    RECEPTIONIST: rcp,
    SIGNING_SECRET: ((await sub.json()) as { signing_secret: string }).signing_secret,
    DELIVERIES_URL: `http://127.0.0.1:${(deliveries.address() as AddressInfo).port}/`,
  };
  worker = await startTestWorker(ctx, { webhookCa: cert.cert });
}, 180_000);

afterAll(async () => {
  await worker?.close();
  api?.closeAllConnections();
  await new Promise((r) => (api ? api.close(r) : r(undefined)));
  await new Promise((r) => (deliveries ? deliveries.close(r) : r(undefined)));
  await receiver?.close();
  await ctx?.close();
  rmSync(PROJECT, { recursive: true, force: true });
});

it('passes publint and @arethetypeswrong/cli', async () => {
  await run(join(BIN, 'publint'), ['run', tarball, '--strict']);
  const attw = await run(join(BIN, 'attw'), [tarball, '--format', 'ascii']).catch(
    (err: { stdout?: string }) => {
      throw new Error(`attw found problems:\n${err.stdout ?? String(err)}`);
    },
  );
  expect(attw.stdout).toContain('No problems found');
});

it('ships JavaScript and declarations only, no private flag', () => {
  const pkg = JSON.parse(
    readFileSync(join(PROJECT, 'app/node_modules/@switchboard/sdk/package.json'), 'utf8'),
  ) as { private?: boolean; license?: string; version?: string };
  expect(pkg.private).toBeUndefined();
  expect(pkg.license).toBeTruthy();
  const shipped = readdirRecursive(join(PROJECT, 'app/node_modules/@switchboard/sdk'));
  expect(shipped.filter((f) => /\.ts$/.test(f) && !/\.d\.m?ts$/.test(f))).toEqual([]);
  expect(shipped.filter((f) => f.includes('test'))).toEqual([]);
});

/** The program as ESM (`.mts`) or CommonJS (`.cts`, `import = require`, no top-level await). */
function source(kind: 'esm' | 'cjs', key: string): string {
  const values = { ...constants, IDEMPOTENCY_KEY: key };
  const decls = Object.entries(values).map(([k, v]) => `const ${k} = ${JSON.stringify(v)};`);
  if (kind === 'esm') {
    return [
      "import { Switchboard, SwitchboardError, verifyWebhook } from '@switchboard/sdk';",
      "import type { ErrorCode, WebhookEvent } from '@switchboard/sdk';",
      "import type { Call } from '@switchboard/sdk/types';",
      ...decls,
      PROGRAM,
    ].join('\n');
  }
  const body = PROGRAM.split('\n').map((l) => (l ? `  ${l}` : l));
  return [
    "import sdk = require('@switchboard/sdk');",
    'const { Switchboard, SwitchboardError, verifyWebhook } = sdk;',
    "import type { Call } from '@switchboard/sdk/types';",
    'type ErrorCode = sdk.ErrorCode;',
    'type WebhookEvent = sdk.WebhookEvent;',
    ...decls,
    'async function main(): Promise<void> {',
    ...body,
    '}',
    'main().catch((err: unknown) => {',
    '  console.error(err);',
    '  throw err;',
    '});',
  ].join('\n');
}

it('refuses a Node older than 20 at import, with a message that says so', async () => {
  // What an old Node reports, on this Node: the check runs before anything else of the SDK.
  const asOld =
    "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '18.20.4' } });";
  const app = join(PROJECT, 'app');
  for (const load of ["require('@switchboard/sdk')", "await import('@switchboard/sdk')"]) {
    const script = `import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/'); ${asOld} ${load}`;
    const err = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: app,
    }).then(
      () => null,
      (e: { stderr: string }) => e.stderr,
    );
    expect(err).toContain('@switchboard/sdk needs Node.js 20 or newer; this is Node.js 18.20.4');
  }
});

describe('a program built with the defaults of tsc --init', () => {
  beforeAll(async () => {
    const app = join(PROJECT, 'app');
    writeFileSync(join(app, 'esm.mts'), source('esm', 'consumer-esm-1'));
    writeFileSync(join(app, 'cjs.cts'), source('cjs', 'consumer-cjs-1'));
    const tsc = await run(join(BIN, 'tsc'), ['-p', '.'], { cwd: app }).catch(
      (err: { stdout?: string }) => {
        throw new Error(`tsc failed:\n${err.stdout ?? String(err)}`);
      },
    );
    expect(tsc.stdout).toBe('');
  }, 120_000);

  const nodes = [process.execPath, ...(NODE_20 ? [NODE_20] : [])].map((node) => ({
    node,
    version: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
  }));
  it.each(
    nodes.flatMap(({ node, version }) => [
      ['esm.mjs', version, node],
      ['cjs.cjs', version, node],
    ]),
  )(
    'runs %s on Node %s: lists, starts an outbound call once, verifies the delivery',
    async (file, _version, node) => {
      const out = await run(node, [file], { cwd: join(PROJECT, 'app') });
      const result = JSON.parse(out.stdout) as {
        call: string;
        replayed: boolean;
        listed: string[];
        event?: string;
        code?: string;
      };
      expect(result.replayed).toBe(true);
      expect(result.listed).toContain(result.call);
      expect(result.event).toBe('call.started');
      expect(result.code).toBe('resource_not_found');
    },
    60_000,
  );
});

function readdirRecursive(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? readdirRecursive(join(dir, e.name), `${prefix}${e.name}/`)
      : [`${prefix}${e.name}`],
  );
}
