import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { parseArgs } from 'node:util';
import type { IncomingHttpHeaders } from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@switchboard/sdk';

// A local HTTPS webhook receiver for trying Switchboard out: prints every delivery and checks
// both signatures when given the subscription's secret. Uses the development certificate
// that `npm start` creates in .dev/ (and tells the worker to trust).
//
//   npm run demo:receiver -- [--port 4443] [--secret whsec_...] [--fail]
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4443' },
    secret: { type: 'string' },
    fail: { type: 'boolean', default: false },
  },
});

let cert: { key: Buffer; cert: Buffer };
try {
  cert = {
    key: readFileSync('.dev/demo-receiver.key'),
    cert: readFileSync('.dev/demo-receiver.pem'),
  };
} catch {
  process.stderr.write('switchboard: no .dev/demo-receiver.pem yet: run `npm start` once first\n');
  process.exit(1);
}

/**
 * `ok`, or why the SDK's verifyWebhook refused the delivery. It checks `x-service-signature`
 * when present, else the Standard Webhooks signature: `scheme` 'standard' leaves the
 * `x-service-*` headers out so that the other one is checked.
 */
function check(
  body: string,
  headers: IncomingHttpHeaders,
  secret: string,
  scheme: 'service' | 'standard',
): string {
  const given =
    scheme === 'standard'
      ? Object.fromEntries(Object.entries(headers).filter(([k]) => !k.startsWith('x-service-')))
      : headers;
  try {
    verifyWebhook(body, given, secret);
    return 'ok';
  } catch (error) {
    if (error instanceof WebhookVerificationError) return `BAD (${error.reason})`;
    throw error;
  }
}

let count = 0;
const server = createServer(cert, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let summary = body.slice(0, 200);
    try {
      const envelope = JSON.parse(body) as {
        id: string;
        event: string;
        data: Record<string, unknown>;
      };
      summary = `${envelope.event} ${envelope.id} ${JSON.stringify(envelope.data).slice(0, 160)}`;
    } catch {
      // not JSON: print the start of it as is
    }
    const secret = values.secret;
    const checked = secret
      ? ` signatures: x-service ${check(body, req.headers, secret, 'service')}, standard ${check(body, req.headers, secret, 'standard')}`
      : '';
    count += 1;
    const status = values.fail ? 500 : 200;
    process.stdout.write(
      `#${count} ${new Date().toISOString()} → ${status} ${summary}${checked}\n`,
    );
    res
      .writeHead(status, { 'content-type': 'text/plain' })
      .end(values.fail ? 'failing on purpose' : 'ok');
  });
});

server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(
    `demo receiver on https://localhost:${values.port}/hook (${values.fail ? 'answering 500' : 'answering 200'}); Ctrl-C stops it\n`,
  );
});
process.on('SIGINT', () => server.close(() => process.exit(0)));
