import {
  ImportFileError,
  LeadExistsError,
  LeadFieldError,
  LeadReceptionistNotFoundError,
} from '@switchboard/leads';
import { ApiError, conflict, invalidParameter, notFound } from '../../errors';

/** The leads module's errors as the contract's API errors; anything else passes through. */
export function leadApiError(err: unknown): unknown {
  if (err instanceof LeadFieldError) return invalidParameter(err.field, err.message);
  if (err instanceof LeadExistsError) return conflict('lead_exists', err.message);
  if (err instanceof LeadReceptionistNotFoundError)
    return notFound('receptionist', 'receptionist_id');
  if (err instanceof ImportFileError) {
    return err.kind === 'too_large'
      ? new ApiError(413, 'invalid_request_error', 'payload_too_large', err.message)
      : invalidParameter('body', err.message);
  }
  return err;
}

/** Runs a use case and rethrows the leads module's errors as API errors. */
export async function withLeadErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw leadApiError(err);
  }
}
