import type { api } from './api';

/** What the page can do, from the session's capabilities. */
export interface Can {
  manage: boolean;
  secrets: boolean;
  recover: boolean;
}

/** What the app hands every page: its API client, what it may do, and the failure handler. */
export type PageProps = {
  client: ReturnType<typeof api>;
  can: Can;
  onFailure: (err: unknown) => boolean;
};
