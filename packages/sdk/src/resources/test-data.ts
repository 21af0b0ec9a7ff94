import type { TestDataDeletion } from '../types';
import { Resource } from './resource';

/** Test mode: the data made with `sk_test_` keys (`livemode: false`). */
export class TestDataResource extends Resource {
  /**
   * Wipes the account's test-mode data (admin): accepted at once (`status: "running"`); the
   * `test_data.deleted` event (test mode) says when it is done. Live data is never touched.
   */
  delete(): Promise<TestDataDeletion> {
    // Not idempotent: a repeat asks for (and announces) a second wipe.
    return this.invoke('DELETE', '/test-data', { idempotent: false });
  }
}
