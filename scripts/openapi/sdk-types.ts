import { join } from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';

/** The checked-in TypeScript types of the SDK, generated from the served OpenAPI document. */
export const SDK_TYPES_FILE = join(__dirname, '../../packages/sdk/src/generated/openapi.ts');

const HEADER =
  '// Generated from the OpenAPI document the API serves, by `npm run sdk:generate`\n' +
  '// (scripts/sdk-generate.ts). Do not edit: a test fails when this file is stale.\n';

/** The file's exact contents for `document`. */
export async function renderSdkTypes(document: object): Promise<string> {
  // A field with a default is optional to send (`plan` of ReceptionistCreate): by default
  // openapi-typescript would make it required, which is right for responses only, and no
  // response schema of ours has a default.
  const ast = await openapiTS(document as OpenAPI3, { silent: true, defaultNonNullable: false });
  return `${HEADER}${COMMENT_HEADER}${astToString(ast)}`;
}
