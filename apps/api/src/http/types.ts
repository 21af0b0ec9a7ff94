import type { PortalCapability, Scope } from '@switchboard/db';

/** Who is calling: set by the auth middleware on every authenticated route. */
export interface AuthContext {
  tenantId: string;
  keyId: string;
  scopes: readonly Scope[];
  /**
   * The key's mode: false for a test-mode key (`sk_test_`), whose requests see and make only
   * test-mode data (docs/API.md, Test mode). Portal tokens are live.
   */
  livemode: boolean;
  /** Set when the caller is a portal token (then `scopes` is empty and `keyId` the session). */
  portal?: PortalAuth;
}

/** A portal session's grant (docs/API.md, Tenant portal). */
export interface PortalAuth {
  sessionId: string;
  capabilities: readonly PortalCapability[];
  /** null: every subscription of the tenant. */
  subscriptionIds: readonly string[] | null;
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
