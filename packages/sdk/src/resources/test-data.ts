import type { TestDataDeletion } from '../types';
import { Resource } from './resource';

/** Test mode: the data made with `sk_test_` keys (`livemode: false`). */
export class TestDataResource extends Resource {
  /**
   * Wipes the account's test-mode data (admin): accepted at once (`status: "running"`); the
   * `test_data.deleted` event (test mode) says when it is done. Live data is never touched.
   */
  delete(): Promise<TestDataDeletion> {
    return this.http.request({ method: 'DELETE', path: '/test-data', idempotent: false });
  }
}
