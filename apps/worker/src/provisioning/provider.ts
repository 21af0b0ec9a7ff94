/** A number to buy for one receptionist. */
export interface NumberRequest {
  /**
   * Idempotency key derived from the receptionist (never from the attempt): the same key
   * must return the same number and never buy a second one.
   */
  key: string;
  /** A 3-digit US area code, or null for any US number. */
  areaCode: string | null;
}

/** The assistant to create for one receptionist. */
export interface AssistantRequest {
  /** Idempotency key derived from the receptionist: the same key, the same assistant. */
  key: string;
  receptionistId: string;
  name: string;
  greeting: string | null;
  plan: string;
  /** The receptionist's number (already bought). */
  phoneNumber: string;
}

/**
 * A provider's refusal. `permanent` ones end the attempt round at once (`error`); transient
 * ones are retried until the round's 3 attempts are spent. `code` becomes the public
 * `error.code` / `receptionist.error` `error_code`; `message` is shown to the tenant too.
 */
export class ProvisioningError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'ProvisioningError';
  }
}

/**
 * Buys numbers and creates assistants (docs/API.md, Receptionists). Both calls must be idempotent by
 * `key`: after a worker crash the same receptionist is provisioned again with the same key,
 * and must get the number (and assistant) it already has, never a second one. A provider
 * whose API has no idempotency keys (a number purchase on most carriers) gets the same
 * effect by tagging what it buys with the key and looking the tag up before buying.
 * Each call must finish or fail well within the claim lease (2 minutes by default).
 * Anything thrown that is not a ProvisioningError counts as a transient failure.
 */
export interface ProvisioningProvider {
  readonly name: string;
  buyNumber(request: NumberRequest): Promise<string>;
  createAssistant(request: AssistantRequest): Promise<string>;
  /** Releases clients and timers; called once when the worker stops. */
  close(): Promise<void>;
}
