import type { Scope } from '@switchboard/db';

/** Who is calling: set by the auth middleware on every authenticated route. */
export interface AuthContext {
  tenantId: string;
  keyId: string;
  scopes: readonly Scope[];
}

/** Validated, type-coerced request parts: set by the validation middleware. */
export interface ValidRequest {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    auth: AuthContext;
    valid: ValidRequest;
  }
}
