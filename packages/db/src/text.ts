/** A UTF-16 surrogate without its other half: not a character, and not valid UTF-8 once encoded. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const REPLACEMENT = '\uFFFD';

/**
 * Makes text that came from outside (a webhook receiver's response, an SMS body, a CSV
 * cell...) storable in a Postgres `text` column, which refuses NUL and anything that is not
 * valid UTF-8. Bytes are decoded as UTF-8, invalid sequences becoming U+FFFD; NUL and lone
 * surrogates (e.g. a string cut in the middle of a pair) become U+FFFD too. Everything else
 * is kept as it was, so the stored text shows where something could not be kept. Use it at
 * the store boundary for every outside string; API input is validated instead (a NUL in a
 * request is a 400, docs/API.md, Errors).
 */
export function toPgText(value: string | Buffer): string {
  const text = typeof value === 'string' ? value : value.toString('utf8');
  return text.replaceAll('\u0000', REPLACEMENT).replace(LONE_SURROGATE, REPLACEMENT);
}

/**
 * JSON.stringify's escape of a NUL (`\u0000`) or of a lone surrogate (`\ud800`-`\udfff`):
 * jsonb refuses both. A value's own backslash before such text matches too; that only
 * costs the slow path.
 */
const REFUSED_ESCAPE = /\\u(?:0000|d[89a-f])/;

/**
 * `value` as JSON text a jsonb column accepts: every string in it, keys included, made safe
 * as by toPgText. Nearly every value needs nothing made safe (a delivery's headers: the
 * request's are the worker's own, a response's come from Node's parser as Latin-1 without
 * NUL), so it is written once and checked once; only a value the check flags is rewritten.
 */
export function toPgJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (!REFUSED_ESCAPE.test(json)) return json;
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'string') return toPgText(v);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(Object.entries(v).map(([k, inner]) => [toPgText(k), inner]));
  });
}
