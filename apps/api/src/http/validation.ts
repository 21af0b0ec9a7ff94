import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { isPossibleE164 } from '@switchboard/phone';
import { invalidParameter } from '../errors';
import type { Step } from './step';
import { findBadText, type BadText } from './text';

/**
 * One ajv instance with the formats every schema may use. `date-time` is RFC 3339 and also
 * a real instant: ajv-formats accepts a leap second (23:59:60), which JavaScript dates and
 * Postgres cannot store. `e164` is the contract's phone number (docs/API.md, Basics).
 */
function createAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = addFormats(new Ajv({ coerceTypes, useDefaults: true, strict: false, verbose: true }));
  const rfc3339 = ajv.formats['date-time'] as { validate: (s: string) => boolean };
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => rfc3339.validate(s) && Number.isFinite(Date.parse(s)),
  });
  ajv.addFormat('e164', { type: 'string', validate: isPossibleE164 });
  return ajv;
}

// Query strings and path params arrive as strings: that instance coerces ("20" → 20), and a
// parameter declared as an array (repeatable, `?type=a&type=b`) given once becomes an array
// of one. Bodies are JSON already and are never coerced, so "20" for an integer field is a 400.
// `verbose` exposes the failing schema, so a field can carry its own `x-error-message`.
const coercing = createAjv('array');
const exact = createAjv(false);

/** The offending field: the missing or unknown property, or the path of the bad value. */
function paramOf(err: ErrorObject, part: string): string {
  const p = err.params as { missingProperty?: string; additionalProperty?: string };
  const base = err.instancePath.split('/').filter(Boolean).join('.');
  const leaf = p.missingProperty ?? p.additionalProperty;
  if (leaf) return base ? `${base}.${leaf}` : leaf;
  return base || part;
}

function messageOf(err: ErrorObject, param: string): string {
  const p = err.params as { additionalProperty?: string; allowedValues?: unknown[] };
  if (p.additionalProperty) return `${param} is not a known field`;
  if (err.keyword === 'required') return `${param} is required`;
  const custom = (err.parentSchema as { 'x-error-message'?: string } | undefined)?.[
    'x-error-message'
  ];
  if (custom) return custom;
  if (err.keyword === 'enum' && p.allowedValues) {
    return `${param} must be one of ${p.allowedValues.join(', ')}`;
  }
  return `${param} ${err.message ?? 'is invalid'}`;
}

export type Part = 'params' | 'query' | 'body';

const badTextMessage = (param: string, bad: BadText): string => {
  const what =
    bad.reason === 'nul'
      ? 'NUL (\\u0000) characters'
      : 'lone surrogates: text must be well-formed Unicode';
  return bad.inKey
    ? `${param} has a field name containing ${what}`
    : `${param} must not contain ${what}`;
};

/**
 * Compiles once, at the first value it checks (ajv's code generation costs about a
 * millisecond per schema: an API process pays it per route it serves, not for all ~100
 * schemas at every start); the returned function returns the (coerced) value or throws a
 * 400. Before the schema, every string and object key is checked for NUL (U+0000), which no
 * text field accepts (docs/API.md, Errors), and for lone surrogates: this is the one place
 * that refuses them, for every route.
 */
export function compileValidator(part: Part, schema: object): (value: unknown) => unknown {
  let compiled: ValidateFunction | undefined;
  const integers = part === 'body' ? [] : integerProperties(schema);
  return (value) => {
    const validate = (compiled ??= (part === 'body' ? exact : coercing).compile(schema));
    const bad = findBadText(value);
    if (bad) {
      const param = bad.path.length ? bad.path.join('.') : part;
      throw invalidParameter(param, badTextMessage(param, bad));
    }
    checkDigits(value, integers);
    if (!validate(value)) {
      const err = validate.errors?.[0] as ErrorObject;
      const param = paramOf(err, part);
      throw invalidParameter(param, messageOf(err, param));
    }
    return value;
  };
}

/**
 * The top-level integer properties of a query or path schema, each with the message of its
 * 400: the field's own `x-error-message`, if any.
 */
function integerProperties(schema: object): Array<[string, string]> {
  const props =
    (schema as { properties?: Record<string, { type?: unknown; 'x-error-message'?: string }> })
      .properties ?? {};
  return Object.entries(props)
    .filter(
      ([, p]) => p.type === 'integer' || (Array.isArray(p.type) && p.type.includes('integer')),
    )
    .map(([name, p]) => [name, p['x-error-message'] ?? `${name} must be an integer (digits only)`]);
}

/**
 * An integer in a query string or a path is written in decimal digits only. Ajv's coercion
 * reads anything JavaScript's Number() reads (`0x10`, `1e2`, `+7`, ` 5`); those are refused
 * here, before it, so that what the document calls an integer is one (docs/API.md, Pagination).
 */
function checkDigits(value: unknown, integers: ReadonlyArray<[string, string]>): void {
  if (integers.length === 0 || typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  for (const [name, message] of integers) {
    const v = record[name];
    if (typeof v === 'string' && !/^[0-9]+$/.test(v)) throw invalidParameter(name, message);
  }
}

/**
 * Compiles a schema once and returns the step that validates one part of the request and
 * stores the (coerced) result in `req.valid[part]`. Failures are 400 invalid_parameter naming
 * the field.
 */
export function validatePart(part: Part, schema: object): Step {
  const check = compileValidator(part, schema);
  return (req) => {
    const source: unknown = part === 'body' ? req.body : { ...(req[part] as object) };
    const value = check(part === 'body' && source === undefined ? {} : source);
    req.valid ??= { params: {}, query: {}, body: undefined };
    if (part === 'body') req.valid.body = value;
    else req.valid[part] = value as Record<string, unknown>;
  };
}
