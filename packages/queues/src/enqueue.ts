import type { JobsOptions, Queue } from 'bullmq';
import { withinMs, type Redis } from './connection';
import { catalog, type Catalog, type CatalogKey } from './catalog';
import { fairPriorities } from './fair';
import type { JobData, JobSpec } from './job-definition';
import { REQUEST_ENQUEUE_TIMEOUT_MS } from './jobs';
import type { Queues } from './queues';

/** A job to add: its payload and any options beyond the catalog's (e.g. a delay). */
export interface JobToAdd<K extends CatalogKey> {
  data: JobData<Catalog[K]>;
  opts?: JobsOptions;
}

// Indexing the catalog by a generic key widens each definition to the union of all of them;
// the key ties data and definition together, so this is the one place that says so.
const specOf = <K extends CatalogKey>(key: K, job: JobToAdd<K>): JobSpec<unknown> =>
  (catalog[key].spec as (d: unknown, o?: JobsOptions) => JobSpec<unknown>)(job.data, job.opts);
const queueOf = (queues: Queues, key: CatalogKey): Queue => queues[key] as unknown as Queue;

/** The specs of jobs to add, with their fair priority on a queue whose jobs have groups. */
async function specsOf<K extends CatalogKey>(
  queue: Queue,
  key: K,
  jobs: ReadonlyArray<JobToAdd<K>>,
): Promise<Array<JobSpec<unknown>>> {
  const specs = jobs.map((j) => specOf(key, j));
  const group = catalog[key].fairGroup as ((d: unknown) => string) | undefined;
  if (!group) return specs;
  const priorities = await fairPriorities(
    queue,
    jobs.map((j) => group(j.data)),
  );
  // A LIFO job (an attempt whose claim lapsed) keeps no priority: BullMQ takes it from the
  // head of the wait list, ahead of every tenant's turn. It is counted all the same (its
  // start takes it off).
  return specs.map((s, i) =>
    s.opts.lifo ? s : { ...s, opts: { ...s.opts, priority: priorities[i] } },
  );
}

/** Adds jobs of one catalog kind in one round trip (worker paths: waits out a Redis outage). */
export async function enqueue<K extends CatalogKey>(
  queues: Queues,
  key: K,
  jobs: ReadonlyArray<JobToAdd<K>>,
): Promise<void> {
  if (jobs.length === 0) return;
  const queue = queueOf(queues, key);
  await queue.addBulk(await specsOf(queue, key, jobs));
}

/**
 * Adds one job from a request path without ever hanging the request. BullMQ waits for a
 * connection that is not ready instead of failing fast, so an outage is recognised up front
 * and the wait is bounded (REQUEST_ENQUEUE_TIMEOUT_MS). Rejects when the job could not be
 * added in time: the caller's row is committed and its reconciler adds the job later. A late
 * success is harmless because job ids are deterministic.
 */
export async function enqueueFromRequest<K extends CatalogKey>(
  queues: Queues,
  connection: Redis,
  key: K,
  job: JobToAdd<K>,
): Promise<void> {
  if (connection.status !== 'ready') throw new Error(`redis connection is ${connection.status}`);
  const queue = queueOf(queues, key);
  const adding = specsOf(queue, key, [job]).then(([spec]) => {
    const s = spec as JobSpec<unknown>;
    return queue.add(s.name, s.data, s.opts);
  });
  await withinMs(REQUEST_ENQUEUE_TIMEOUT_MS, adding, 'job add');
}
