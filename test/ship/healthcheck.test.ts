import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { ROOT } from '../support/api-process';
import { createTestContext, type TestContext } from '../support/context';

// The image's HEALTHCHECK (docker/Dockerfile) as Docker runs it, without Docker: its exec-form
// command, with the container's PORT, against the API's app.
const DOCKERFILE = readFileSync(resolve(ROOT, 'docker/Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
const command = (): string[] => {
  const json = /^HEALTHCHECK\s.*?\bCMD\s+(\[.*\])\s*$/m.exec(DOCKERFILE)?.[1];
  if (!json) throw new Error('docker/Dockerfile has no exec-form HEALTHCHECK');
  return JSON.parse(json) as string[];
};

/** The exit code of the health check run with PORT set, as in the runtime image. */
const check = (port: number) =>
  new Promise<number>((done) => {
    const [file, ...args] = command();
    // `node` in the image; here the node running the tests.
    const bin = file === 'node' ? process.execPath : (file as string);
    execFile(bin, args, { env: { PORT: String(port) } }, (err) =>
      done(err ? Number((err as { code?: unknown }).code ?? 1) : 0),
    );
  });

const listen = (server: Server) =>
  new Promise<number>((done) =>
    server.listen(0, '127.0.0.1', () => done((server.address() as AddressInfo).port)),
  );
const close = (server: Server) => new Promise((done) => server.close(done));

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

test('it passes while the API answers /healthz on PORT', async () => {
  const api = createServer(ctx.app);
  const port = await listen(api);
  try {
    expect(await check(port)).toBe(0);
  } finally {
    await close(api);
  }
});

test('it fails when nothing listens on PORT, or /healthz is not 2xx', async () => {
  const gone = createServer();
  const port = await listen(gone);
  await close(gone);
  expect(await check(port)).toBe(1);

  const sick = createServer((_req, res) => res.writeHead(503).end());
  try {
    expect(await check(await listen(sick))).toBe(1);
  } finally {
    await close(sick);
  }
});
