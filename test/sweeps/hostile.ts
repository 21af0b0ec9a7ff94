import fc from 'fast-check';

/**
 * Values no well-behaved client sends, for any field, header or path segment: wrong types,
 * boundary numbers, huge strings, NUL and lone surrogates, unicode that breaks naive code,
 * injection-shaped text, and (inside JSON) deep nesting.
 */
export const HOSTILE_TEXT = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '\ufeff',
  '\u202eevil',
  'e\u0301\u0301\u0301',
  '😀'.repeat(40),
  'Ω≈ç√∫˜µ≤≥÷',
  '田中さんにあげて下さい',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '"; DROP TABLE calls; --',
  '../../etc/passwd',
  '%00',
  '%E0%A4%A',
  '${jndi:ldap://x}',
  '{{name}}',
  '\\u0000',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e309',
  '0x10',
  '2026-02-30T25:61:61Z',
  '9999-12-31T23:59:59.999Z',
  '+00000000000000000',
  'rcp_',
  'call_' + 'A'.repeat(65),
  'sk_live_',
] as const;

/** A string a fuzzer would try in a text position (never longer than `max`). */
export const hostileString = (max = 200_000): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 256, max: Math.max(256, max) }).map((n) => 'x'.repeat(n)),
    },
  );

export const HOSTILE_NUMBERS = [
  -1,
  0,
  -0,
  0.5,
  1e-300,
  2 ** 31,
  2 ** 53,
  2 ** 53 + 2,
  1e21,
  1e308,
  -1e308,
] as const;

/** Marks a place for deep nesting in a JSON value; `jsonText` expands it. */
const DEEP = '\u0001deep:';
export const deep = (depth: number, shape: 'array' | 'object'): string =>
  `${DEEP}${depth}:${shape}`;

/** JSON.stringify, with every `deep()` marker expanded to that many nested levels. */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.replace(/"\\u0001deep:(\d+):(array|object)"/g, (_m, n: string, shape: string) => {
    const depth = Number(n);
    return shape === 'array'
      ? '['.repeat(depth) + ']'.repeat(depth)
      : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  });
}

/** A JSON value of the wrong kind for almost any field. */
export const hostileJson = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 3, arbitrary: hostileString(20_000) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': '' }),
    },
    { weight: 2, arbitrary: fc.constantFrom<unknown>(...HOSTILE_NUMBERS) },
    { weight: 1, arbitrary: fc.double() },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.integer({ min: 50, max: 50_000 }),
          fc.constantFrom('array', 'object') as fc.Arbitrary<'array' | 'object'>,
        )
        .map(([n, shape]) => deep(n, shape)),
    },
    { weight: 1, arbitrary: fc.array(fc.constant('x'), { minLength: 1000, maxLength: 5000 }) },
  );

/** Characters an HTTP client may put in a header value (the rest it refuses to send). */
export const headerText = (maxLength = 300): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength }),
    fc
      .array(fc.integer({ min: 0x80, max: 0xff }), { maxLength: 20 })
      .map((codes) => String.fromCharCode(...codes)),
    fc.constantFrom('', ' ', 'x'.repeat(256), '\t', 'a'.repeat(8000)),
  );

/**
 * A body that is not the JSON its route expects: malformed text, other types, a charset,
 * a compressed body that is not, or more than the 1 MiB limit.
 */
export const hostileBody = (): fc.Arbitrary<{
  contentType: string | null;
  text: string | Buffer;
}> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .constantFrom(
          '{',
          '{"a":}',
          'nul',
          '[1,]',
          '{"a":1}{"b":2}',
          '\u0000',
          '"\\ud800"',
          '{"__proto__":{"x":1}}',
          '{"constructor":{"prototype":{}}}',
        )
        .map((text) => ({ contentType: 'application/json', text })),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            null,
            'text/plain',
            'application/xml',
            'application/x-www-form-urlencoded',
            'application/json; charset=latin1',
            'application/json; charset=utf-16',
            'multipart/form-data; boundary=x',
            'application/merge-patch+json',
            'text/csv',
          ),
          fc.constantFrom('{"name":"x"}', 'a=1&b=2', '<a/>', 'name,phone\nx,+14155550123\n'),
        )
        .map(([contentType, text]) => ({ contentType, text })),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ minLength: 1, maxLength: 200 })
        .map((bytes) => ({ contentType: 'application/json', text: Buffer.from(bytes) })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({
        contentType: 'application/json',
        text: `{"a":"${'x'.repeat(1_100_000)}"}`,
      }),
    },
  );
