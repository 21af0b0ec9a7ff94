/**
 * Synthetic call rows for the bulk load, as COPY text lines. Deterministic (a seeded PRNG),
 * generated in started_at order like real traffic, so the heap is roughly time-ordered.
 */

/** sfc32: small, fast, 128 bits of state; good enough for synthetic data. */
export function prng(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 20; i++) next();
  return next;
}

/** The columns written by COPY, in order. */
export const COPY_COLUMNS = [
  'id',
  'tenant_id',
  'receptionist_id',
  'provider_call_id',
  'direction',
  'status',
  'from_number',
  'to_number',
  'customer_name',
  'customer_phone',
  'duration_seconds',
  'outcome',
  'end_reason',
  'started_at',
  'answered_at',
  'ended_at',
  'transcript',
  'recording',
  'booking',
  'cost',
  'metadata',
  'purpose',
  'created_at',
  'updated_at',
] as const;

export interface SeedReceptionist {
  id: string;
  phone: string;
}
export interface SeedTenant {
  id: string;
  calls: number;
  receptionists: SeedReceptionist[];
}

const NULL = '\\N';
const SPECIAL = /[\\\t\n\r]/;
/** COPY text format: backslash, tab, newline and carriage return are escaped. */
const copyText = (s: string): string =>
  SPECIAL.test(s)
    ? s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
    : s;
const json = (v: unknown): string => copyText(JSON.stringify(v));

const FIRST = [
  'Ana',
  'Ben',
  'Chloe',
  'Dev',
  'Elena',
  'Farid',
  'Grace',
  'Hugo',
  'Iris',
  'Jonas',
  'Kemi',
  'Liam',
  'Maya',
  'Nils',
  'Olga',
  'Priya',
  'Quinn',
  'Rosa',
  'Sam',
  'Tariq',
  'Uma',
  'Vic',
];
const LAST = [
  'Alvarez',
  'Brooks',
  'Chen',
  'Dubois',
  'Evans',
  'Fischer',
  'Garcia',
  'Haddad',
  'Ito',
  'Jensen',
  'Kowalski',
  'Larsen',
  'Moreau',
  'Novak',
  'Okafor',
  'Patel',
  'Rossi',
  'Silva',
];
const SERVICES = [
  'boiler repair',
  'leak fix',
  'drain cleaning',
  'annual service',
  'water heater install',
  'radiator bleed',
  'emergency callout',
  'estimate visit',
];
const STREETS = ['Oak St', 'Maple Ave', 'Pine Rd', 'Cedar Ln', 'Elm St', 'Birch Way', 'Lake Dr'];
const OPENERS = [
  'Thanks for calling, how can I help you today?',
  'Good morning, you have reached the front desk. What can I do for you?',
  'Hello, thanks for calling. Who am I speaking with?',
];
const ASKS = [
  'Hi, my boiler stopped working this morning and there is no hot water.',
  'I would like to book an annual service for my heating system.',
  'There is a leak under the kitchen sink, can someone come out?',
  'What are your opening hours on Saturdays?',
  'Can I get a quote for replacing a water heater?',
  'I am returning a call about my appointment next week.',
];
const REPLIES = [
  'I can help with that. Could you confirm the address for the visit?',
  'Sure, we have availability tomorrow morning or Thursday afternoon.',
  'Our technicians are available Monday to Saturday from 8am to 6pm.',
  'I have noted that down and a technician will call you back within the hour.',
  'A standard visit is 89 dollars, parts are quoted on site.',
];
const CLOSERS = [
  'Great, that works for me. Thank you!',
  'Perfect, see you then.',
  'Okay, I will wait for the call back. Thanks.',
  'Thanks, that is all I needed.',
];
const SUMMARIES = [
  'Caller reported a boiler fault and booked a repair visit.',
  'Caller asked about opening hours; information provided.',
  'Caller requested a quote; details captured as a lead.',
  'Caller reported a leak; message taken for the on-call technician.',
  'Caller asked to speak to a person; transferred to the office.',
];

type Direction = 'inbound' | 'outbound';
type Status = 'completed' | 'missed' | 'voicemail' | 'no_answer' | 'busy' | 'failed' | 'canceled';

/** Picks from weighted options with one uniform draw. */
function weighted<T>(u: number, options: readonly (readonly [T, number])[]): T {
  let acc = 0;
  for (const [value, weight] of options) {
    acc += weight;
    if (u < acc) return value;
  }
  return (options[options.length - 1] as readonly [T, number])[0];
}

const INBOUND_STATUS = [
  ['completed', 0.8],
  ['missed', 0.13],
  ['voicemail', 0.05],
  ['failed', 0.02],
] as const;
const OUTBOUND_STATUS = [
  ['completed', 0.68],
  ['no_answer', 0.13],
  ['busy', 0.08],
  ['voicemail', 0.06],
  ['failed', 0.03],
  ['canceled', 0.02],
] as const;
const OUTCOMES = [
  ['booked', 0.25],
  ['lead_captured', 0.18],
  ['message_taken', 0.15],
  ['transferred', 0.08],
  ['information_provided', 0.29],
  ['spam', 0.05],
] as const;
/**
 * Calls per distinct started_at. Bursts of equal timestamps (down to the millisecond) are
 * far more common than in real traffic on purpose: they exercise the (started_at, id) ties.
 */
const BURSTS: readonly (readonly [min: number, max: number, weight: number])[] = [
  [1, 1, 0.6],
  [2, 4, 0.25],
  [5, 20, 0.12],
  [21, 100, 0.025],
  [101, 400, 0.005],
];
const MEAN_BURST = BURSTS.reduce((s, [min, max, w]) => s + ((min + max) / 2) * w, 0);
const BURST_OPTIONS = BURSTS.map(([min, max, w]) => [[min, max] as const, w] as const);

export class CallRowGenerator {
  private readonly rand: () => number;
  private readonly remaining: number[];
  private remainingTotal: number;
  private readonly meanGapMs: number;
  private now: number;
  private burstLeft = 0;

  constructor(
    private readonly tenants: readonly SeedTenant[],
    opts: { seed: number; startMs: number; spanMs: number },
  ) {
    this.rand = prng(opts.seed);
    this.remaining = tenants.map((t) => t.calls);
    this.remainingTotal = this.remaining.reduce((s, n) => s + n, 0);
    this.meanGapMs = opts.spanMs / (this.remainingTotal / MEAN_BURST);
    this.now = opts.startMs;
  }

  get left(): number {
    return this.remainingTotal;
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.rand() * (max - min + 1));
  }
  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.rand() * list.length)] as T;
  }
  private hex32(): string {
    let s = '';
    for (let i = 0; i < 4; i++)
      s += ((this.rand() * 4294967296) >>> 0).toString(16).padStart(8, '0');
    return s;
  }
  private phone(): string {
    return `+1${this.int(201, 989)}555${String(this.int(0, 9999)).padStart(4, '0')}`;
  }

  /** The tenant of the next row, drawn in proportion to what each still has to get. */
  private tenantIndex(): number {
    let u = this.rand() * this.remainingTotal;
    for (let i = 0; i < this.remaining.length; i++) {
      const r = this.remaining[i] as number;
      if (u < r) return i;
      u -= r;
    }
    return this.remaining.findIndex((r) => r > 0);
  }

  private nextStartedAt(): number {
    if (this.burstLeft === 0) {
      const [min, max] = weighted(this.rand(), BURST_OPTIONS);
      this.burstLeft = this.int(min, max);
      this.now += Math.floor(this.rand() * 2 * this.meanGapMs);
    }
    this.burstLeft--;
    return this.now;
  }

  private transcript(opener: string): { summary: string; turns: object[] } {
    const turns: object[] = [];
    let offset = 0;
    const n = this.int(4, 8);
    for (let i = 0; i < n; i++) {
      const role = i % 2 === 0 ? 'assistant' : 'customer';
      const text =
        i === 0
          ? opener
          : role === 'customer'
            ? i === n - 1
              ? this.pick(CLOSERS)
              : this.pick(ASKS)
            : this.pick(REPLIES);
      turns.push({ role, text, offset_seconds: offset });
      offset += this.int(3, 25);
    }
    return { summary: this.pick(SUMMARIES), turns };
  }

  /** One COPY line (with its newline), or null when every tenant has its calls. */
  next(): string | null {
    if (this.remainingTotal === 0) return null;
    const ti = this.tenantIndex();
    const tenant = this.tenants[ti] as SeedTenant;
    this.remaining[ti] = (this.remaining[ti] as number) - 1;
    this.remainingTotal--;
    // Busier receptionists first: a skewed pick.
    const rcp = tenant.receptionists[
      Math.floor(tenant.receptionists.length * this.rand() ** 1.6)
    ] as SeedReceptionist;
    const startedAt = this.nextStartedAt();
    const id = `call_${this.hex32()}`;
    const direction: Direction = this.rand() < 0.7 ? 'inbound' : 'outbound';
    const status: Status = weighted(
      this.rand(),
      direction === 'inbound' ? INBOUND_STATUS : OUTBOUND_STATUS,
    );
    const customerPhone = this.phone();
    const customerName = this.rand() < 0.6 ? `${this.pick(FIRST)} ${this.pick(LAST)}` : null;
    const from = direction === 'inbound' ? customerPhone : rcp.phone;
    const to = direction === 'inbound' ? rcp.phone : customerPhone;

    let duration: number | null = null;
    let outcome: string = 'no_outcome';
    let endReason: string;
    let answeredAt: number | null = null;
    let transcript: object | null = null;
    let recording: object | null = null;
    let booking: object | null = null;
    let cost: object | null = null;
    switch (status) {
      case 'completed': {
        outcome = weighted(this.rand(), OUTCOMES);
        duration = this.int(25, 900);
        answeredAt = startedAt + this.int(500, 8000);
        endReason =
          outcome === 'transferred'
            ? 'transferred'
            : weighted(this.rand(), [
                ['caller_hangup', 0.7],
                ['agent_hangup', 0.28],
                ['max_duration', 0.02],
              ] as const);
        transcript = this.transcript(this.pick(OPENERS));
        if (this.rand() < 0.9) {
          recording = {
            url: `https://recordings.switchboard.example/${id}.mp3`,
            duration_seconds: duration,
            format: 'mp3',
          };
        }
        if (outcome === 'booked') {
          const d = new Date(startedAt + this.int(1, 14) * 86_400_000);
          booking = {
            confirmation: `BK-${this.hex32().slice(0, 6).toUpperCase()}`,
            date: d.toISOString().slice(0, 10),
            time: `${String(this.int(8, 17)).padStart(2, '0')}:${this.rand() < 0.5 ? '00' : '30'}`,
            service_type: this.pick(SERVICES),
            address: `${this.int(1, 999)} ${this.pick(STREETS)}`,
          };
        }
        const telephony = Math.round(duration * 0.0085 * 10000) / 10000;
        const ai = Math.round(duration * 0.0012 * 10000) / 10000;
        const sms = outcome === 'booked' ? 0.0079 : 0;
        cost = {
          currency: 'USD',
          total: Math.round((telephony + ai + sms) * 10000) / 10000,
          breakdown: { telephony, ai, sms },
        };
        break;
      }
      case 'missed':
        duration = this.int(0, 30);
        endReason = 'abandoned';
        break;
      case 'voicemail':
        duration = this.int(8, 90);
        endReason = 'voicemail';
        recording = {
          url: `https://recordings.switchboard.example/${id}.mp3`,
          duration_seconds: duration,
          format: 'mp3',
        };
        break;
      case 'no_answer':
        endReason = 'no_answer';
        break;
      case 'busy':
        endReason = 'busy';
        break;
      default:
        endReason = 'error';
    }
    const endedAt =
      startedAt + (answeredAt !== null ? answeredAt - startedAt : 0) + (duration ?? 0) * 1000;
    const endedIso = new Date(endedAt).toISOString();
    const metadata =
      direction === 'outbound' && this.rand() < 0.4
        ? { campaign: 'spring-service', source: 'crm' }
        : {};
    const purpose = direction === 'outbound' ? 'Follow up on the service request' : null;

    return (
      [
        id,
        tenant.id,
        rcp.id,
        `CA${this.hex32()}`,
        direction,
        status,
        from,
        to,
        customerName ?? NULL,
        customerPhone,
        duration === null ? NULL : String(duration),
        outcome,
        endReason,
        new Date(startedAt).toISOString(),
        answeredAt === null ? NULL : new Date(answeredAt).toISOString(),
        endedIso,
        transcript ? json(transcript) : NULL,
        recording ? json(recording) : NULL,
        booking ? json(booking) : NULL,
        cost ? json(cost) : NULL,
        json(metadata),
        purpose ?? NULL,
        endedIso,
        endedIso,
      ].join('\t') + '\n'
    );
  }
}
