import fc from 'fast-check';
import { hostileJson, hostileString } from './hostile';
import type { JsonSchema } from './operations';
import { FIELD_ID_KINDS } from './requests';
import type { Kind, World } from './world';

/**
 * fast-check arbitraries derived from the JSON Schemas of the served document: values near
 * the schema (what a real client sends, with real ids of both tenants) and `mutated()`
 * versions of them (one place turned hostile). Field names that name a resource, a cursor or
 * a URL get values that reach deep into the handlers rather than stop at validation.
 */
export interface Gen {
  world: World;
}

/** Ids a client may send where an id of `kind` goes: own, foreign, missing, wrong kind. */
export function idValue(g: Gen, kind: Kind | null): fc.Arbitrary<string> {
  const { own, foreign } = g.world;
  const ownIds = Object.values(own.ids);
  const sameKind = kind ? [own.ids[kind]] : ownIds;
  const missing = (id: string) =>
    id.replace(/[0-9a-f]$/i, (c) => (c === '0' ? '1' : '0')).replace(/^([a-z]+)_/, '$1_');
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...sameKind) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...(kind ? [foreign.ids[kind]] : Object.values(foreign.ids))),
    },
    { weight: 1, arbitrary: fc.constantFrom(...sameKind.map(missing)) },
    { weight: 1, arbitrary: fc.constantFrom(...ownIds) },
    { weight: 1, arbitrary: fc.constantFrom(...sameKind.map((id) => id.toUpperCase())) },
  );
}

/** Cursors: real ones of both tenants, tampered ones, and made-up ones. */
export function cursorValue(g: Gen): fc.Arbitrary<string> {
  const real = [...g.world.own.cursors, ...g.world.foreign.cursors];
  const tamper = (c: string, i: number) => {
    const at = i % c.length;
    return c.slice(0, at) + (c[at] === 'A' ? 'B' : 'A') + c.slice(at + 1);
  };
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...g.world.own.cursors) },
    { weight: 2, arbitrary: fc.constantFrom(...real) },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...real), fc.nat()).map(([c, i]) => tamper(c, i)),
    },
    { weight: 1, arbitrary: fc.base64String({ maxLength: 80 }) },
    { weight: 1, arbitrary: fc.constantFrom('.', 'e30', 'W10.', 'WzFd.AAAA', 'null') },
  );
}

/** Webhook URLs: every host resolves to loopback in sweeps, and the port refuses. */
export function urlValue(g: Gen): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.domain(), fc.webPath())
        .map(([host, path]) => `https://${host}:${g.world.closedPort}${path}`),
    },
    { weight: 1, arbitrary: fc.webUrl() },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'http://example.com/hook',
        'https://user:pw@example.com/hook',
        'https://[::1]/hook',
        'https://0x7f.1/hook',
        'https:///hook',
        'javascript:alert(1)',
        `https://example.com/${'a'.repeat(3000)}`,
      ),
    },
  );
}

const PHONES = [
  '+14155550123',
  '+442071838750',
  '+8613800138000',
  '+15005550006',
  '+1415555',
  '+999',
];

type Schema = JsonSchema & {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
};

function stringFor(s: Schema): fc.Arbitrary<string> {
  const maxLength = Math.min(s.maxLength ?? 60, 60);
  const minLength = Math.min(s.minLength ?? 0, maxLength);
  if (s.format === 'date-time') {
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString());
  }
  if (s.format === 'e164') return fc.constantFrom(...PHONES);
  if (s.format === 'email') return fc.emailAddress();
  if (s.format === 'uuid') return fc.uuid();
  if (s.pattern) {
    return fc.stringMatching(new RegExp(s.pattern)).map((v) => v.slice(0, s.maxLength ?? 1000));
  }
  return fc.string({ unit: 'grapheme', minLength, maxLength });
}

/** A value near `schema` (mostly valid) for a field called `name`. */
export function valueFor(schema: JsonSchema, g: Gen, name = '', depth = 0): fc.Arbitrary<unknown> {
  const s = schema as Schema;
  const kind = FIELD_ID_KINDS[name] ?? null;
  if (kind || /_ids?$/.test(name) || name === 'id') {
    const one = idValue(g, kind);
    return s.type === 'array' ? fc.array(one, { maxLength: 5 }) : one;
  }
  if (name === 'cursor') return cursorValue(g);
  if (name === 'url' || name === 'webhook_url') return urlValue(g);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const branches = s.oneOf ?? s.anyOf;
  if (branches?.length) return fc.oneof(...branches.map((b) => valueFor(b, g, name, depth + 1)));
  if (Array.isArray(s.type)) {
    return fc.oneof(...s.type.map((t) => valueFor({ ...s, type: t }, g, name, depth)));
  }
  if (depth > 5) return fc.constant(null);
  switch (s.type) {
    case 'string':
      return stringFor(s);
    case 'integer':
      return fc.integer({ min: s.minimum ?? -10, max: s.maximum ?? 10_000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valueFor(s.items ?? {}, g, name, depth + 1), {
        minLength: s.minItems ?? 0,
        maxLength: Math.min(s.maxItems ?? 4, 4),
      });
    case 'object':
    case undefined: {
      const props = s.properties ?? {};
      const record = fc.record(
        Object.fromEntries(
          Object.entries(props).map(([k, v]) => [k, valueFor(v, g, k, depth + 1)]),
        ),
        { requiredKeys: (s.required ?? []).filter((k) => k in props) },
      );
      if (typeof s.additionalProperties !== 'object') return record;
      const extra = fc.dictionary(
        fc.string({ minLength: 1, maxLength: 12 }),
        valueFor(s.additionalProperties, g, '', depth + 1),
        { maxKeys: 4 },
      );
      return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...r }));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Every (container, key) of a JSON value: the places a mutation can hit. */
function places(
  value: unknown,
  out: Array<[Record<string, unknown> | unknown[], string | number]> = [],
) {
  if (Array.isArray(value)) value.forEach((v, i) => (out.push([value, i]), places(v, out)));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push([value as Record<string, unknown>, k]);
      places(v, out);
    }
  }
  return out;
}

/** `value` with one place made hostile: replaced, removed, or joined by an unknown field. */
export function mutated(value: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      value,
      fc.nat(),
      fc.constantFrom('replace', 'drop', 'unknown', 'whole'),
      hostileJson(),
      hostileString(300),
    )
    .map(([v, pick, how, hostile, key]) => {
      const copy = structuredClone(v);
      const spots = places(copy);
      if (how === 'whole' || spots.length === 0) {
        return how === 'unknown' && copy && typeof copy === 'object'
          ? { ...copy, [key]: hostile }
          : hostile;
      }
      const [container, at] = spots[pick % spots.length] as [Record<string, unknown>, string];
      if (how === 'replace') container[at] = hostile;
      else if (how === 'drop') {
        if (Array.isArray(container)) container.splice(Number(at), 1);
        else delete container[at];
      } else if (!Array.isArray(container)) container[key || 'x'] = hostile;
      return copy;
    });
}
