import fc from 'fast-check';
import { idValue, mutated, valueFor, type Gen } from './arbitraries';
import { headerText, hostileBody, hostileString, jsonText } from './hostile';
import type { Operation, Param } from './operations';
import type { Req } from './requests';
import { withIds } from './requests';
import { PATH_ID_KINDS } from './world';

/** Which key a fuzzed request carries. */
export type AuthKind =
  | 'required'
  | 'admin'
  | 'lower'
  | 'none'
  | 'garbage'
  | 'malformed'
  | 'revoked'
  | 'portal'
  | 'portalView';

/** One generated request, before it is made concrete (see `toRequest`). */
export interface FuzzCase {
  op: Operation;
  /** Path values; `raw` ones are put in the URL unencoded (bad percent-encoding). */
  path: Record<string, { value: string; raw: boolean }>;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  auth: AuthKind;
  body: { contentType: string | null; text: string | Buffer } | null;
}

/** RFC 3986 percent-encoding of UTF-8 (a lone surrogate becomes U+FFFD, as any client sends it). */
const encode = (s: string): string =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

const pathValue = (
  g: Gen,
  op: Operation,
  p: Param,
): fc.Arbitrary<{ value: string; raw: boolean }> => {
  const kind = PATH_ID_KINDS[op.operationId]?.[p.name] ?? null;
  return fc.oneof(
    { weight: 8, arbitrary: idValue(g, kind).map((value) => ({ value, raw: false })) },
    { weight: 2, arbitrary: valueFor(p.schema, g).map((v) => ({ value: String(v), raw: false })) },
    {
      weight: 3,
      arbitrary: hostileString(3000)
        .filter((s) => s.length > 0)
        .map((value) => ({ value, raw: false })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('%E0%A4%A', '%', '%FF', '%C0%AF', '..', '.')
        .map((value) => ({ value, raw: true })),
    },
  );
};

const queryPairs = (g: Gen, op: Operation): fc.Arbitrary<Array<[string, string]>> => {
  const documented = op.query.map((q) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant<Array<[string, string]>>([]) },
      {
        weight: 4,
        arbitrary: valueFor(q.schema, g, q.name).map(
          (v) => [[q.name, String(v)]] as Array<[string, string]>,
        ),
      },
      {
        weight: 2,
        arbitrary: hostileString(4000).map((v) => [[q.name, v]] as Array<[string, string]>),
      },
      {
        // A repeated parameter arrives as an array.
        weight: 1,
        arbitrary: fc.tuple(valueFor(q.schema, g, q.name), valueFor(q.schema, g, q.name)).map(
          ([a, b]) =>
            [
              [q.name, String(a)],
              [q.name, String(b)],
            ] as Array<[string, string]>,
        ),
      },
    ),
  );
  const unknown = fc.array(
    fc.tuple(fc.string({ minLength: 1, maxLength: 20 }), hostileString(100)),
    { maxLength: 2 },
  );
  return fc
    .tuple(fc.tuple(...documented), unknown)
    .map(([known, extra]) => [...known.flat(), ...extra]);
};

/** `v` as text an HTTP client sends in a header: tab, printable ASCII and Latin-1 only. */
const sendableHeader = (v: unknown): string => String(v).replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');

const headerValues = (g: Gen, op: Operation): fc.Arbitrary<Record<string, string>> =>
  fc
    .tuple(
      fc.tuple(
        ...op.headers.map((h) =>
          fc.option(
            fc
              // A schema's string may hold characters no client can put in a header.
              .oneof(valueFor(h.schema, g, h.name).map(sendableHeader), headerText())
              .map((v) => [h.name, v] as const),
            { freq: 2 },
          ),
        ),
      ),
      fc.option(
        fc.tuple(
          fc.constantFrom(
            'X-Forwarded-For',
            'Accept',
            'Content-Encoding',
            'X-Request-Id',
            'Accept-Charset',
          ),
          headerText(),
        ),
      ),
    )
    .map(([documented, extra]) => {
      const out: Record<string, string> = { Accept: 'application/json, text/event-stream' };
      for (const pair of [...documented, extra]) if (pair) out[pair[0]] = pair[1];
      return out;
    });

function jsonBody(g: Gen, op: Operation) {
  const schemaValue = valueFor(op.body?.schema ?? {}, g);
  const example = op.body?.example;
  const near =
    example === undefined
      ? schemaValue
      : fc.oneof(fc.constant(withIds(example, g.world.own)), schemaValue);
  return fc
    .oneof({ weight: 3, arbitrary: near }, { weight: 5, arbitrary: mutated(near) })
    .map((v) => ({
      contentType: 'application/json' as string | null,
      text: jsonText(v) as string | Buffer,
    }));
}

const CSV_HEADERS = [
  'name',
  'phone',
  'email',
  'status',
  'notes',
  'tags',
  'Name',
  'PHONE',
  'crm_id',
  '',
];
function csvBody() {
  const cell = fc.oneof(
    fc.constantFrom('Ada', '+14155550123', 'a@b.co', 'new', 'x;y', '"q""uote"', ''),
    hostileString(2000),
  );
  const text = fc
    .tuple(
      fc.uniqueArray(fc.constantFrom(...CSV_HEADERS), { minLength: 0, maxLength: 6 }),
      fc.array(fc.array(cell, { maxLength: 7 }), { maxLength: 8 }),
    )
    .map(([header, rows]) => [header.join(','), ...rows.map((r) => r.join(','))].join('\n'));
  return fc.oneof(
    {
      weight: 4,
      arbitrary: text.map((t) => ({
        contentType: 'text/csv' as string | null,
        text: t as string | Buffer,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => ({
        contentType: 'text/csv' as string | null,
        text: Buffer.concat([Buffer.from('name,phone\n'), Buffer.from(b)]) as string | Buffer,
      })),
    },
  );
}

const bodyFor = (g: Gen, op: Operation) => {
  if (!op.body) {
    return fc.oneof(
      { weight: 9, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: hostileBody() },
    );
  }
  const good = op.body.contentType === 'text/csv' ? csvBody() : jsonBody(g, op);
  return fc.oneof(
    { weight: 6, arbitrary: good },
    { weight: 1, arbitrary: hostileBody() },
    { weight: 1, arbitrary: fc.constant(null) },
  );
};

const AUTH = fc.oneof(
  { weight: 12, arbitrary: fc.constant<AuthKind>('required') },
  { weight: 5, arbitrary: fc.constant<AuthKind>('admin') },
  {
    weight: 1,
    arbitrary: fc.constantFrom<AuthKind>('lower', 'none', 'garbage', 'malformed', 'revoked'),
  },
  // Portal tokens (docs/API.md, Tenant portal): every capability, or view only.
  { weight: 2, arbitrary: fc.constantFrom<AuthKind>('portal', 'portalView') },
);

/** A request to `op`: mostly what a client means to send, with one or more hostile parts. */
export function caseFor(g: Gen, op: Operation): fc.Arbitrary<FuzzCase> {
  return fc
    .record({
      path: fc.tuple(...op.pathParams.map((p) => pathValue(g, op, p))),
      query: queryPairs(g, op),
      headers: headerValues(g, op),
      auth: AUTH,
      body: bodyFor(g, op),
    })
    .map(({ path, ...rest }) => ({
      op,
      path: Object.fromEntries(
        op.pathParams.map((p, i) => [p.name, path[i] as { value: string; raw: boolean }]),
      ),
      ...rest,
    }));
}

/** Requests spread over every operation of the document. */
export const anyCase = (g: Gen, ops: Operation[]): fc.Arbitrary<FuzzCase> =>
  fc.constantFrom(...ops).chain((op) => caseFor(g, op));

/** The concrete request of a case: URL, headers with the chosen key, body. */
export function toRequest(c: FuzzCase, g: Gen): Req {
  const { own } = g.world;
  const path = `/api/v1${c.op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const v = c.path[name] ?? { value: 'x', raw: false };
    return v.raw ? v.value : encode(v.value);
  })}`;
  const query = c.query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
  const scope = c.op.scope ?? 'read';
  const lower = scope === 'admin' ? own.keys.write : own.keys.read;
  const auth: Record<AuthKind, string | null> = {
    required: own.keys[scope],
    admin: own.keys.admin,
    lower,
    none: null,
    garbage: 'Bearer sk_live_0000000000000000000000000000000000000000',
    malformed: 'Basic dXNlcjpwYXNz',
    revoked: own.revoked,
    portal: own.portal.full,
    portalView: own.portal.view,
  };
  const headers = { ...c.headers };
  const key = auth[c.auth];
  if (key) headers.Authorization = key;
  if (c.body?.contentType) headers['Content-Type'] = c.body.contentType;
  return {
    method: c.op.method,
    url: query ? `${path}?${query}` : path,
    headers,
    body: c.body?.text,
    stream: c.op.streams,
  };
}
