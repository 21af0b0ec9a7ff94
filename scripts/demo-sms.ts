import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfigOrExit } from '@switchboard/config';
import { createKnex, explainDatabaseError } from '@switchboard/db';
import { signCarrierMessage } from '@switchboard/telephony';

// Plays one inbound SMS through the telephony ingestion endpoint, as the carrier would: a
// customer texts the receptionist's number. `--message STOP` opts the sender out of the
// tenant's SMS (the next POST /api/v1/sms/send to them is refused), `--message START` back in.
//
//   npm run demo:sms -- --receptionist rcp_... --from +14155550123 --message STOP
//     [--to <the receptionist's number, looked up in DATABASE_URL when omitted>]
//     [--base http://127.0.0.1:3000]
// Reads INGEST_TOKEN, DATABASE_URL and PORT from the environment (npm start keeps them in .env),
// and signs as the carrier when SMS_CARRIER_SIGNING_SECRET is set (docs/TELEPHONY.md).
const { values } = parseArgs({
  options: {
    receptionist: { type: 'string' },
    from: { type: 'string' },
    message: { type: 'string' },
    to: { type: 'string' },
    base: { type: 'string' },
  },
});
if (!values.receptionist || !values.from || values.message === undefined) {
  process.stderr.write(
    'usage: npm run demo:sms -- --receptionist rcp_... --from +14155550123 --message STOP [--to +1...]\n',
  );
  process.exit(2);
}
// The API's settings: this script plays the voice platform against the running API.
const config = loadConfigOrExit('api');

/** The number the carrier delivers to: the receptionist's own. */
async function receptionistNumber(id: string): Promise<string> {
  const knex = createKnex(config.databaseUrl, { poolMax: 1, quietConnectionErrors: true });
  try {
    const row = (await knex('receptionists').where({ id }).first('phone_number')) as
      { phone_number: string | null } | undefined;
    if (!row) throw new Error(`no receptionist ${id} in ${new URL(config.databaseUrl).pathname}`);
    if (!row.phone_number) throw new Error(`receptionist ${id} has no phone number yet`);
    return row.phone_number;
  } finally {
    await knex.destroy();
  }
}

/** A failed fetch names the URL it tried (undici says only "fetch failed"). */
const unreachable = (base: string | undefined, err: unknown): Error => {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return new Error(
    `cannot reach the API at ${base} (${cause?.code ?? cause?.message ?? (err as Error).message}): ` +
      'is npm start running? (it keeps PORT in .env)',
  );
};

async function main(receptionistId: string, from: string, text: string): Promise<void> {
  const to = values.to ?? (await receptionistNumber(receptionistId));
  const message = {
    id: `msg_${randomUUID()}`,
    type: 'sms.inbound',
    receptionist_id: receptionistId,
    provider_message_id: `SM${randomUUID().replace(/-/g, '')}`,
    from,
    to,
    message: text,
    occurred_at: new Date().toISOString(),
  };
  const base = values.base ?? `http://127.0.0.1:${config.port}`;
  const body = JSON.stringify(message);
  const [secret] = config.carrierSigningSecrets;
  const res = await fetch(`${base}/internal/v1/telephony/events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${config.ingestToken}`,
      ...(secret ? signCarrierMessage(secret, body) : {}),
    },
    body,
  }).catch((err: unknown) => {
    throw unreachable(base, err);
  });
  process.stdout.write(
    `sms.inbound ${from} → ${to} ${JSON.stringify(text)}: ${res.status} ${await res.text()}\n`,
  );
  if (!res.ok) process.exitCode = 1;
}

main(values.receptionist, values.from, values.message).catch((err: unknown) => {
  const why = explainDatabaseError(err, config.databaseUrl) ?? (err as Error).message;
  process.stderr.write(`switchboard: ${why}\n`);
  process.exit(1);
});
