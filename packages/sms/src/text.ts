/**
 * The text rules of SMS (docs/API.md, SMS): how many segments a message takes on the
 * air, which messages are opt-out / opt-in keywords, and how carrier text is made safe to
 * store. Pure functions: the API, ingestion and the worker share them.
 */

// GSM 03.38: the default alphabet (one septet each; ESC, 0x1B, is not a character) and the
// extension table (ESC + one septet: two septets each).
const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
    '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑܧ¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
const GSM7_EXTENSION = new Set('\f^{}\\[~]|€');

/** Capacity of one message alone, and of each part of a concatenated one (the UDH takes 6 octets). */
const GSM7_SINGLE = 160;
const GSM7_PART = 153;
const UCS2_SINGLE = 70;
const UCS2_PART = 67;

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SmsSegments {
  encoding: SmsEncoding;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) the text takes on the air. */
  units: number;
  segments: number;
}

/**
 * Splits `sizes` (the size of each character, in order) into parts of at most `part` units
 * without cutting a character (a GSM-7 escape pair, a UTF-16 surrogate pair), as carriers do.
 */
function countParts(sizes: readonly number[], part: number): number {
  let parts = 1;
  let used = 0;
  for (const size of sizes) {
    if (used + size > part) {
      parts++;
      used = 0;
    }
    used += size;
  }
  return parts;
}

/**
 * Segments of a message: GSM-7 when every character is in the GSM 03.38 default alphabet or
 * its extension table (extension characters such as `€`, `{`, `[`, `|` count twice), split at
 * 160 septets, 153 per part when split; anything else is UCS-2 (UTF-16), split at 70 code
 * units, 67 per part, where a character outside the Basic Multilingual Plane (most emoji)
 * takes two. No part ever ends inside a character. An empty message is one (empty) segment.
 */
export function smsSegments(text: string): SmsSegments {
  const chars = Array.from(text);
  const gsm = chars.every((c) => GSM7_BASIC.has(c) || GSM7_EXTENSION.has(c));
  const sizes = gsm
    ? chars.map((c) => (GSM7_EXTENSION.has(c) ? 2 : 1))
    : chars.map((c) => c.length);
  const units = sizes.reduce((sum, n) => sum + n, 0);
  const [single, part] = gsm ? [GSM7_SINGLE, GSM7_PART] : [UCS2_SINGLE, UCS2_PART];
  return {
    encoding: gsm ? 'GSM-7' : 'UCS-2',
    units,
    segments: units <= single ? 1 : countParts(sizes, part),
  };
}

/** Invisible format characters (zero-width space and joiners, BOM, soft hyphen, bidi marks). */
const INVISIBLE = /\p{Cf}/gu;
/** Quotes a keyword may be wrapped in: straight, curly, guillemets, backtick. */
const QUOTED =
  /^(["'`\u2018\u2019\u201C\u201D\u00AB\u00BB])(.*)(["'`\u2018\u2019\u201C\u201D\u00AB\u00BB])$/su;

/**
 * What an inbound message does to its sender's consent: `opt_out` for STOP, STOPALL,
 * UNSUBSCRIBE, CANCEL, END, QUIT; `opt_in` for START, UNSTOP, YES; `help` for HELP, INFO
 * (a help reply, no change of consent); null for anything else.
 * The keyword must be the whole message, in any letter case, surrounding whitespace and
 * newlines ignored ("stop please" is an ordinary message), and invisible characters
 * (`\p{Cf}`, such as a zero-width space) removed. An opt-out is also recognised wrapped in
 * quotes and followed by `.` or `!` (`"STOP"`, `Stop.`, `STOP!!`): recipients and carriers
 * mean STOP, and leniency there only means fewer texts. An opt-in takes the bare keyword.
 * The `i` flag without `u` folds ASCII letters only, so look-alikes such as `ſ` (long s)
 * are not keywords.
 */
export function smsKeyword(text: string): 'opt_out' | 'opt_in' | 'help' | null {
  const word = text.replace(INVISIBLE, '').trim();
  if (/^(?:START|UNSTOP|YES)$/i.test(word)) return 'opt_in';
  if (/^(?:HELP|INFO)$/i.test(word)) return 'help';
  const unquoted = word.replace(QUOTED, '$2').trim();
  const bare = unquoted
    .replace(/[.!]+$/, '')
    .replace(QUOTED, '$2')
    .trim();
  if (/^(?:STOP|STOPALL|UNSUBSCRIBE|CANCEL|END|QUIT)$/i.test(bare)) return 'opt_out';
  return null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Carrier text made storable: Postgres text refuses NUL and jsonb (the outbox) refuses
 * unpaired surrogates, so NULs are removed and unpaired surrogates become U+FFFD.
 */
export function safeSmsText(text: string): string {
  return text.replaceAll('\u0000', '').replace(LONE_SURROGATE, '\uFFFD');
}
