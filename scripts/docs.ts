import { parseArgs } from 'node:util';
import express from 'express';
import { mountApiReference } from '../apps/api/src/openapi/reference-page';
import { servedOpenApiDocument } from './openapi/served-document';

// The API reference for a reader, with or without a running service:
//
//   npm run docs                 # an API answering on PORT (default 3000)? print its /api/v1/docs;
//                                # else serve the reference on http://127.0.0.1:4000/api/v1/docs
//   npm run docs -- --port 4100  # another port for the stand-alone reference
//   npm run docs -- --standalone # always serve the reference of this checkout
//
// The stand-alone page shows the document built from this checkout's code (createApi), the
// same one the API serves; it needs neither Postgres nor Redis. Ctrl-C stops it.
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4000' },
    api: { type: 'string', default: `http://127.0.0.1:${process.env.PORT ?? 3000}` },
    standalone: { type: 'boolean', default: false },
  },
});

async function runningApi(base: string): Promise<boolean> {
  try {
    const res = await fetch(`${base}/api/v1/openapi.json`, { signal: AbortSignal.timeout(1000) });
    return res.ok;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  if (!values.standalone && (await runningApi(values.api))) {
    process.stdout.write(`API reference (the running API): ${values.api}/api/v1/docs\n`);
    return;
  }
  const document = await servedOpenApiDocument();
  const app = express();
  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(document);
  });
  mountApiReference(app, ['/api/v1']);
  app.get('/', (_req, res) => res.redirect('/api/v1/docs'));
  const server = app.listen(Number(values.port), '127.0.0.1', () => {
    process.stdout.write(
      `API reference: http://127.0.0.1:${values.port}/api/v1/docs (stand-alone; Ctrl-C stops)\n`,
    );
  });
  server.on('error', (err) => {
    process.stderr.write(`docs: cannot listen on port ${values.port}: ${err.message}\n`);
    process.exit(1);
  });
  process.on('SIGINT', () => server.close(() => process.exit(0)));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

main().catch((err: unknown) => {
  process.stderr.write(`docs: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
