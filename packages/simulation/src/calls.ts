import { randomInt, randomUUID } from 'node:crypto';
import type {
  CallEndedMessage,
  CallMissedMessage,
  CallStartedMessage,
} from '@switchboard/telephony';

/**
 * Realistic call content for demo data and the outbound-call simulator: who calls, what is
 * said, how it ends. Nothing here touches storage; callers feed the messages it builds
 * through `applyTelephonyMessage`, the same path real telephony takes.
 */
const FIRST = [
  'Dana',
  'Marcus',
  'Priya',
  'Tom',
  'Elena',
  'Jamal',
  'Grace',
  'Luis',
  'Hannah',
  'Omar',
];
const LAST = [
  'Whitfield',
  'Okafor',
  'Shah',
  'Brennan',
  'Rossi',
  'Carter',
  'Nguyen',
  'Alvarez',
  'Kim',
  'Haddad',
];
const STREETS = [
  'Elm Street',
  'Maple Avenue',
  'Harbor Road',
  'Oak Lane',
  'Cedar Court',
  'Mill Road',
];
const SERVICES = [
  { type: 'Boiler service', ask: 'my boiler needs its annual service' },
  { type: 'Leak repair', ask: 'there is a leak under my kitchen sink' },
  { type: 'Radiator bleed', ask: 'two radiators are cold at the top' },
  { type: 'Water heater install', ask: 'I need a new water heater installed' },
  { type: 'Drain unblocking', ask: 'my shower drain is blocked' },
];
const OUTCOMES = [
  'booked',
  'booked',
  'booked',
  'lead_captured',
  'message_taken',
  'information_provided',
  'transferred',
  'spam',
] as const;

const pick = <T>(items: readonly T[]): T => items[randomInt(items.length)] as T;
const pad = (n: number) => String(n).padStart(2, '0');

export interface ScenarioInput {
  receptionistId: string;
  receptionistName: string;
  direction: 'inbound' | 'outbound';
  /** The receptionist's number; the customer's is `customerPhone`. */
  businessPhone: string;
  customerPhone: string;
  customerName?: string;
  startedAt: Date;
  providerCallId?: string;
}

export interface CallScenario {
  started: CallStartedMessage;
  ended: CallEndedMessage;
}

/** A conversation that is answered, talks and usually books. */
export function answeredCall(input: ScenarioInput, chosen = pick(OUTCOMES)): CallScenario {
  // Spam is something that calls in, never something we call.
  const outcome = input.direction === 'outbound' && chosen === 'spam' ? 'lead_captured' : chosen;
  const name = input.customerName ?? `${pick(FIRST)} ${pick(LAST)}`;
  const service = pick(SERVICES);
  const day = new Date(input.startedAt.getTime() + (1 + randomInt(6)) * 86_400_000);
  const date = day.toISOString().slice(0, 10);
  const time = `${pad(8 + randomInt(9))}:${pick(['00', '30'])}`;
  const address = `${10 + randomInt(180)} ${pick(STREETS)}, Springfield`;
  const booked = outcome === 'booked';
  const opening =
    input.direction === 'inbound'
      ? `Thanks for calling ${input.receptionistName}, this is the virtual receptionist. How can I help?`
      : `Hi ${name.split(' ')[0]}, this is the virtual receptionist from ${input.receptionistName}, calling about your enquiry.`;
  const lines: Array<['assistant' | 'customer', string]> = [
    ['assistant', opening],
    ['customer', `Hi, ${service.ask}.`],
    ['assistant', 'I can help with that. Could I take your name and address?'],
    ['customer', `${name}, ${address}.`],
    booked
      ? ['assistant', `I have ${date} at ${time} available. Shall I book that for you?`]
      : ['assistant', 'Let me pass this to the team and they will get back to you today.'],
    booked ? ['customer', 'Yes please, that works.'] : ['customer', 'Great, thank you.'],
    [
      'assistant',
      booked
        ? `You're booked. Your confirmation will follow by text.`
        : 'Thanks for calling, goodbye.',
    ],
  ];
  let offset = 0;
  const turns = lines.map(([role, text]) => {
    const turn = { role, text, offset_seconds: offset };
    offset += 3 + Math.round(text.length / 12);
    return turn;
  });
  const duration = offset + 2;
  const endedAt = new Date(input.startedAt.getTime() + duration * 1000);
  const answeredAt = new Date(input.startedAt.getTime() + 1000 * (1 + randomInt(4)));
  const providerCallId = input.providerCallId ?? `sim_${randomUUID()}`;
  const [from, to] =
    input.direction === 'inbound'
      ? [input.customerPhone, input.businessPhone]
      : [input.businessPhone, input.customerPhone];
  const telephony = Math.round(duration * 0.0013 * 10000) / 10000;
  const ai = Math.round(duration * 0.0035 * 10000) / 10000;
  const sms = booked ? 0.0079 : 0;
  const base = {
    receptionist_id: input.receptionistId,
    provider_call_id: providerCallId,
    direction: input.direction,
    from,
    to,
    customer_name: name,
  };
  return {
    started: {
      id: `msg_${randomUUID()}`,
      type: 'call.started',
      ...base,
      occurred_at: input.startedAt.toISOString(),
    },
    ended: {
      id: `msg_${randomUUID()}`,
      type: 'call.ended',
      ...base,
      customer_phone: input.customerPhone,
      started_at: input.startedAt.toISOString(),
      answered_at: answeredAt.toISOString(),
      occurred_at: endedAt.toISOString(),
      duration_seconds: duration,
      outcome,
      end_reason:
        outcome === 'transferred'
          ? 'transferred'
          : pick(['caller_hangup', 'agent_hangup'] as const),
      transcript: {
        summary: booked
          ? `${name} booked ${service.type.toLowerCase()} for ${date} at ${time}.`
          : `${name} called about ${service.type.toLowerCase()}; ${outcome.replace(/_/g, ' ')}.`,
        turns,
      },
      recording: {
        url: `https://recordings.switchboard.example/${providerCallId}.mp3`,
        duration_seconds: duration,
        format: 'mp3',
      },
      ...(booked
        ? {
            booking: {
              confirmation: `BK-${randomInt(1000, 9999)}`,
              date,
              time,
              service_type: service.type,
              address,
            },
          }
        : {}),
      cost: {
        currency: 'USD',
        total: Math.round((telephony + ai + sms) * 10000) / 10000,
        breakdown: { telephony, ai, sms },
      },
    },
  };
}

/** An inbound call nobody answered, or the caller abandoned. */
export function missedCall(input: ScenarioInput): {
  started: CallStartedMessage;
  missed: CallMissedMessage;
} {
  const providerCallId = input.providerCallId ?? `sim_${randomUUID()}`;
  const at = new Date(input.startedAt.getTime() + 1000 * (5 + randomInt(25)));
  return {
    started: {
      id: `msg_${randomUUID()}`,
      type: 'call.started',
      receptionist_id: input.receptionistId,
      provider_call_id: providerCallId,
      direction: 'inbound',
      from: input.customerPhone,
      to: input.businessPhone,
      occurred_at: input.startedAt.toISOString(),
    },
    missed: {
      id: `msg_${randomUUID()}`,
      type: 'call.missed',
      receptionist_id: input.receptionistId,
      provider_call_id: providerCallId,
      from: input.customerPhone,
      to: input.businessPhone,
      started_at: input.startedAt.toISOString(),
      occurred_at: at.toISOString(),
      reason: pick(['no_ai_answer', 'abandoned'] as const),
      recovery_scheduled: randomInt(2) === 1,
    },
  };
}

/** Real US area codes, so generated numbers pass E.164 validation (libphonenumber). */
const AREA_CODES = ['212', '305', '312', '415', '503', '512', '617', '702', '720', '808'];

/** A fictional number: a real area code and the 555-01xx block reserved for fiction. */
export const fictionalPhoneNumber = (): string =>
  `+1${pick(AREA_CODES)}55501${pad(randomInt(100))}`;
