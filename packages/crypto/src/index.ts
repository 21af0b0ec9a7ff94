/** `@switchboard/crypto`: encryption of secrets at rest (AES-256-GCM, key ids for rotation). */
export {
  createSecretBox,
  SecretBox,
  SecretBoxError,
  SECRET_BOX_VERSION,
  type SecretKey,
} from './secret-box';

import { createSecretBox as create, type SecretBox as Box } from './secret-box';

/** Key id of SECRET_ENCRYPTION_KEY inside tokens; a rotated-in key gets a new id. */
export const PRIMARY_KEY_ID = 'k1';

/** The secret box every process builds from its one configured key. */
export const secretBoxForKey = (key: Buffer): Box =>
  create([{ id: PRIMARY_KEY_ID, key }], PRIMARY_KEY_ID);
