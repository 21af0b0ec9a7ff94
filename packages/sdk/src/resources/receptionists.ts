import type { PageIterator } from '../pagination';
import type {
  Call,
  ListParams,
  Receptionist,
  ReceptionistCreate,
  ReceptionistUpdate,
} from '../types';
import { Resource, segment, type EditOptions, type IdempotentRequestOptions } from './resource';

/**
 * The account's receptionists: create and provision them, read and update them, and each
 * one's call history (its SMS history is `client.sms.listForReceptionist`).
 */
export class ReceptionistsResource extends Resource {
  /**
   * Creates a receptionist (202, `status: "provisioning"`); the service buys its number and
   * creates its assistant, then it becomes `ready` (`receptionist.ready`) or `error`
   * (`receptionist.error`, with `error.code`). Poll `get(id)` or subscribe to the events.
   * Idempotent: a key is generated when none is given and reused on this call's retries.
   */
  create(body: ReceptionistCreate, options: IdempotentRequestOptions = {}): Promise<Receptionist> {
    return this.createIdempotent('/receptionists', body, options);
  }

  /**
   * Provisions a receptionist in `error` again (202, back to `provisioning`); any other
   * state is a 409 `invalid_state`. Not repeated after an ambiguous failure: the first try
   * may have started a round that already ended, and a repeat would start another.
   */
  provision(id: string): Promise<Receptionist> {
    return this.invoke('POST', `/receptionists/${segment(id)}/provision`, { idempotent: false });
  }

  list(params: ListParams<'listReceptionists'> = {}): PageIterator<Receptionist> {
    return this.paginateData<Receptionist>('/receptionists', params);
  }

  get(id: string): Promise<Receptionist> {
    return this.fetchOne(`/receptionists/${segment(id)}`);
  }

  /**
   * `name` and `greeting` need write; `webhook_url` needs admin. With `ifMatch`, only if the
   * receptionist is still at that version (see {@link EditOptions}).
   */
  update(id: string, body: ReceptionistUpdate, options: EditOptions = {}): Promise<Receptionist> {
    return this.invoke('PATCH', `/receptionists/${segment(id)}`, {
      body,
      idempotent: true,
      ifMatch: options.ifMatch,
    });
  }

  /** One receptionist's calls, newest first, following cursors. */
  listCalls(id: string, params: ListParams<'listReceptionistCalls'> = {}): PageIterator<Call> {
    return this.paginateData<Call>(`/receptionists/${segment(id)}/calls`, params);
  }
}
