import { smsSegments } from '@switchboard/sms';

/**
 * Synthetic SMS rows for the history seed, as COPY text lines: deterministic (the caller's
 * seeded PRNG), in created_at order like real traffic, both directions.
 */

/** The seed spreads one receptionist's messages over this span (about a year). */
export const SPAN_MS = 365 * 86_400_000;

/** The columns written by COPY, in order. */
export const COPY_COLUMNS = [
  'id',
  'tenant_id',
  'receptionist_id',
  'direction',
  'status',
  'from_number',
  'to_number',
  'message',
  'segments',
  'provider_message_id',
  'created_at',
  'updated_at',
  'sent_at',
  'received_at',
];
const TEXTS = [
  'Hi {name}, your {service} is booked for {day} at {time}. Reply STOP to opt out.',
  'Reminder: {service} tomorrow at {time}. Reply C to confirm or call us to reschedule.',
  'Thanks {name}! Your invoice for the {service} is ready.',
  'Hi, can I move my appointment to {day}?',
  'Yes that works, thank you',
  'What time will the engineer arrive?',
  'Merci beaucoup, à {day} !',
  'Great, see you then 👍',
  'STOP',
];
const NAMES = ['Ana', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hugo', 'Iris', 'Priya'];
const SERVICES = ['boiler service', 'leak repair', 'drain cleaning', 'radiator bleed'];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];

/** COPY text lines of one receptionist's messages, oldest first (like real traffic). */
export function* messageRows(
  rand: () => number,
  r: { tenantId: string; id: string; phone: string },
  count: number,
  startMs: number,
): Generator<string> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const hex = () =>
    Array.from({ length: 4 }, () =>
      Math.floor(rand() * 2 ** 32)
        .toString(16)
        .padStart(8, '0'),
    ).join('');
  let t = startMs;
  for (let i = 0; i < count; i++) {
    // Bursts share one millisecond now and then: ties on created_at are broken by id.
    if (rand() > 0.2) t += Math.floor((rand() * 2 * SPAN_MS) / count);
    const at = new Date(t).toISOString();
    const inbound = rand() < 0.5;
    const customer = `+1415${String(2000000 + Math.floor(rand() * 7999999))}`;
    const text = pick(TEXTS)
      .replace('{name}', pick(NAMES))
      .replace('{service}', pick(SERVICES))
      .replace('{day}', pick(DAYS))
      .replace('{time}', `${8 + Math.floor(rand() * 9)}:${rand() < 0.5 ? '00' : '30'}`);
    yield (
      [
        `sms_${hex()}`,
        r.tenantId,
        r.id,
        inbound ? 'inbound' : 'outbound',
        inbound ? 'received' : 'sent',
        inbound ? customer : r.phone,
        inbound ? r.phone : customer,
        text,
        String(smsSegments(text).segments),
        inbound ? `SM${hex()}` : `simsms_${i}`,
        at,
        at,
        inbound ? '\\N' : at,
        inbound ? at : '\\N',
      ].join('\t') + '\n'
    );
  }
}
