import { parseArgs } from 'node:util';
import { answeredCall, fictionalPhoneNumber } from '@switchboard/simulation';

// Plays one inbound call through the telephony ingestion endpoint, as the voice platform
// would: call.started, then call.ended with a transcript, recording, booking and cost.
//
//   npm run demo:call -- --receptionist rcp_... [--base http://127.0.0.1:3000]
// Reads INGEST_TOKEN from the environment (npm start keeps it in .env).
const { values } = parseArgs({
  options: {
    receptionist: { type: 'string' },
    base: { type: 'string', default: `http://127.0.0.1:${process.env.PORT ?? 3000}` },
  },
});
const token = process.env.INGEST_TOKEN;
if (!values.receptionist || !token) {
  process.stderr.write(
    'usage: INGEST_TOKEN=... npm run demo:call -- --receptionist rcp_... (INGEST_TOKEN is in .env)\n',
  );
  process.exit(2);
}

/** A failed fetch names the URL it tried (undici says only "fetch failed"). */
const unreachable = (base: string | undefined, err: unknown): Error => {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return new Error(
    `cannot reach the API at ${base} (${cause?.code ?? cause?.message ?? (err as Error).message}): ` +
      'is npm start running? (it keeps PORT in .env)',
  );
};

async function main(receptionistId: string, ingestToken: string): Promise<void> {
  const call = answeredCall({
    receptionistId,
    receptionistName: 'Demo',
    direction: 'inbound',
    businessPhone: '+14155550100',
    customerPhone: fictionalPhoneNumber(),
    startedAt: new Date(Date.now() - 120_000),
  });
  for (const message of [call.started, call.ended]) {
    const res = await fetch(`${values.base}/internal/v1/telephony/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ingestToken}` },
      body: JSON.stringify(message),
    }).catch((err: unknown) => {
      throw unreachable(values.base, err);
    });
    process.stdout.write(`${message.type}: ${res.status} ${await res.text()}\n`);
  }
}

main(values.receptionist, token).catch((err: unknown) => {
  process.stderr.write(`switchboard: ${(err as Error).message}\n`);
  process.exit(1);
});
