import { createRequire } from 'node:module';

interface Validator {
  (data: unknown): boolean;
  errors?: unknown[] | null;
}
interface Ajv {
  addSchema(schema: object, key: string): Ajv;
  getSchema(ref: string): Validator | undefined;
  errorsText(errors?: unknown[] | null): string;
}

// The API's own ajv (v8, JSON Schema 2020-12), resolved from apps/api: the repository root
// resolves an older ajv that eslint brings along.
const fromApi = createRequire(require.resolve('@switchboard/api/package.json'));
const Ajv2020 = (fromApi('ajv/dist/2020') as { default: new (opts: object) => Ajv }).default;
const addFormats = (fromApi('ajv-formats') as { default: (ajv: Ajv) => Ajv }).default;

/**
 * Checks bodies against the served OpenAPI document: `check(method, path, status, body)`
 * throws, naming the first mismatch, when a body breaks the documented response schema.
 */
export function responseChecker(document: object) {
  const ajv = addFormats(new Ajv2020({ strict: false, validateSchema: false }));
  ajv.addSchema(document, 'openapi');
  const escape = (segment: string) =>
    encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));
  return (method: string, path: string, status: number, body: unknown): void => {
    const pointer = [
      'paths',
      path,
      method,
      'responses',
      String(status),
      'content',
      'application/json',
      'schema',
    ]
      .map(escape)
      .join('/');
    const validate = ajv.getSchema(`openapi#/${pointer}`);
    if (!validate) throw new Error(`no documented ${status} body for ${method} ${path}`);
    if (!validate(body)) {
      throw new Error(
        `${method} ${path} ${status} breaks its schema: ${ajv.errorsText(validate.errors)}\n` +
          JSON.stringify(body).slice(0, 500),
      );
    }
  };
}

/**
 * Checks a body against the document's `Error` component (the contract's error body):
 * returns null when it conforms, else what is wrong.
 */
export function errorBodyChecker(document: object) {
  const ajv = addFormats(new Ajv2020({ strict: false, validateSchema: false }));
  ajv.addSchema(document, 'openapi');
  const validate = ajv.getSchema('openapi#/components/schemas/Error');
  if (!validate) throw new Error('the document has no Error component');
  return (body: unknown): string | null =>
    validate(body) ? null : ajv.errorsText(validate.errors);
}
