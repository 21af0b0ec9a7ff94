/**
 * The delivery benchmark's webhook receiver, run as its own process so that it does not
 * share an event loop with the load generator: HTTPS on 127.0.0.1, keep-alive, every request
 * answered 200 as soon as its body has arrived. Requests go to `/p/<phase>/<sub>`; the
 * receiver counts them per phase and, for the phases named in RECEIVER_TRACE (comma list),
 * keeps each receipt (event id from `x-service-event-id`, time) until the benchmark drains
 * them over IPC.
 *
 * Env: RECEIVER_KEY_FILE, RECEIVER_CERT_FILE (PEM), RECEIVER_TRACE, RECEIVER_SLOW (phases
 * answered 300-600 ms late, to keep attempts in flight). Started by
 * bench/delivery.ts with an IPC channel; reports `{kind: 'ready', port}` once listening.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isToReceiver, nowMs, type FromReceiver, type PhaseStats, type Receipt } from './protocol';

function send(message: FromReceiver): void {
  process.send?.(message);
}

function main(): void {
  const keyFile = process.env.RECEIVER_KEY_FILE;
  const certFile = process.env.RECEIVER_CERT_FILE;
  if (!keyFile || !certFile || !process.send) {
    throw new Error('receiver needs RECEIVER_KEY_FILE, RECEIVER_CERT_FILE and an IPC channel');
  }
  const traced = new Set((process.env.RECEIVER_TRACE ?? '').split(',').filter(Boolean));
  // Phases whose receiver is slow: each request is answered 300-600 ms after its body.
  const slow = new Set((process.env.RECEIVER_SLOW ?? '').split(',').filter(Boolean));
  const phases = new Map<string, PhaseStats & { seen: Set<string> }>();
  let records: Receipt[] = [];

  const server = createServer(
    { key: readFileSync(keyFile), cert: readFileSync(certFile) },
    (req, res) => {
      const at = nowMs();
      const path = req.url ?? '/';
      const [, root, phase = '', sub = ''] = path.split('/');
      const answer = () =>
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
      req.on('data', () => undefined);
      req.on('end', () => {
        if (slow.has(phase)) setTimeout(answer, 300 + Math.random() * 300);
        else answer();
      });
      if (root !== 'p' || !phase) return;
      const eventId = String(req.headers['x-service-event-id'] ?? '');
      let stats = phases.get(phase);
      if (!stats) {
        stats = { count: 0, distinct: 0, first: at, last: at, seen: new Set() };
        phases.set(phase, stats);
      }
      stats.count++;
      stats.last = at;
      const key = `${sub}|${eventId}`;
      if (!stats.seen.has(key)) {
        stats.seen.add(key);
        stats.distinct++;
      }
      if (traced.has(phase)) records.push([phase, sub, eventId, at]);
    },
  );
  // Longer than any pause between phases: a keep-alive socket the server closes while the
  // client reuses it would show up as a failed attempt, which is not what is measured here.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;

  process.on('message', (message: unknown) => {
    if (!isToReceiver(message)) return;
    if (message.kind === 'stats') {
      const out: Record<string, PhaseStats> = {};
      for (const [name, s] of phases) {
        out[name] = { count: s.count, distinct: s.distinct, first: s.first, last: s.last };
      }
      const cpu = process.cpuUsage();
      send({ id: message.id, kind: 'stats', phases: out, cpuMs: (cpu.user + cpu.system) / 1000 });
    } else {
      send({ id: message.id, kind: 'records', records });
      records = [];
    }
  });
  // The benchmark going away (IPC closed) ends the receiver too.
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });

  server.listen(0, '127.0.0.1', () => {
    send({ kind: 'ready', port: (server.address() as AddressInfo).port });
  });
}

main();
