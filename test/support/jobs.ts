import type { Job, Queue } from 'bullmq';
import {
  catalog,
  type Catalog,
  type CatalogKey,
  type JobData,
  type JobSpec,
  type Queues,
} from '@switchboard/queues';

/**
 * Adds one job of catalog kind `key` and returns it: its queue, name and options come from
 * the job catalog, as in the apps. `jobId` replaces the catalog's id, for a test that needs a
 * duplicate beside the real job (what a stalled-job recovery or a reconciler can leave).
 */
export function addJob<K extends CatalogKey>(
  queues: Queues,
  key: K,
  data: JobData<Catalog[K]>,
  opts: { jobId?: string } = {},
): Promise<Job> {
  // Indexing the catalog by a generic key widens each definition to the union of all of
  // them; the key ties data and definition together (as in packages/queues' enqueue).
  const spec = (catalog[key].spec as (d: unknown) => JobSpec<unknown>)(data);
  const queue = queues[key] as unknown as Queue;
  return queue.add(spec.name, spec.data, { ...spec.opts, ...opts });
}
