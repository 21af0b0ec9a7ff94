import Ajv, { type ValidateFunction } from 'ajv';
import type { JobsOptions } from 'bullmq';
import type { JSONSchema } from 'json-schema-to-ts';
import { currentTraceparent } from '@switchboard/telemetry';

const ajv = new Ajv({ strict: true, allErrors: false });

/** A job as BullMQ's `add`/`addBulk` take it. */
export interface JobSpec<T> {
  name: string;
  data: T;
  opts: JobsOptions;
}

/**
 * Everything about one kind of job, in one place: the queue it lives on, its job name, the
 * JSON Schema of its payload (the payload type is derived from it), the rule that makes its
 * job id, and its default options. Nothing outside the catalog spells a queue name, a job
 * name or a job id.
 */
export interface JobDefinition<T> {
  /** Queue name: part of the data in Redis, never rename it. */
  readonly queue: string;
  readonly name: string;
  /** Deterministic id: re-adding a job that still exists is a no-op. Never contains ':'. */
  jobId(data: T): string;
  /** The payload, validated: null when `data` is not a payload of this job (jobs outlive deploys). */
  parse(data: unknown): T | null;
  /**
   * The job ready for `add`/`addBulk`, with its id and any extra options (e.g. a delay). A
   * job that carries its trace gets the active span's `traceparent` in its payload when it
   * has none and tracing is on.
   */
  spec(data: T, opts?: JobsOptions): JobSpec<T>;
  /** The queue's lock and stalled-check timings: chosen per queue, on purpose. */
  readonly timings: QueueTimings;
  /**
   * The group a job takes turns with other groups' jobs in (./fair.ts): jobs of a queue with
   * groups are added with a fair priority. Absent: one FIFO.
   */
  readonly fairGroup?: (data: T) => string;
  /**
   * The job continues the trace it was added in: its payload has a `traceparent`, which
   * `spec` fills in, and the worker runs it in a span of that trace (apps/worker,
   * queue-worker.ts), so what it does and the events it emits join the request's trace.
   */
  readonly carriesTrace: boolean;
}

/**
 * How fast a job whose worker died comes back: BullMQ renews a running job's lock every half
 * `lockDurationMs`; once a dead worker's lock expires, the next stalled check (every
 * `stalledIntervalMs`) moves the job back to wait. So a job in flight at a SIGKILL runs again
 * within about lockDurationMs + stalledIntervalMs. The lock must outlast any pause of the
 * worker's event loop (a lock that lapses under a live worker runs the job twice, which every
 * processor tolerates but should not do routinely).
 */
export interface QueueTimings {
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
}

export type JobData<D> = D extends JobDefinition<infer T> ? T : never;

/**
 * Defines a job from its payload schema. `T` is the payload type derived from that same
 * schema (`FromSchema<typeof schema>`), so the type and the runtime check cannot disagree.
 */
export function defineJob<T>(def: {
  queue: string;
  name: string;
  schema: JSONSchema;
  jobId: (data: T) => string;
  options?: JobsOptions;
  timings: QueueTimings;
  fairGroup?: (data: T) => string;
  /** Its payload schema declares an optional `traceparent` (see JobDefinition). */
  carriesTrace?: boolean;
}): JobDefinition<T> {
  // Compiled at the first payload it checks: a process compiles the jobs it runs only.
  let validate: ValidateFunction | undefined;
  const carriesTrace = def.carriesTrace === true;
  /** The payload with the active trace, when it carries one and has none yet. */
  const traced = (data: T): T => {
    if (!carriesTrace || (data as { traceparent?: string }).traceparent) return data;
    // Null at once when tracing is off: no work on the hot path.
    const traceparent = currentTraceparent();
    return traceparent ? { ...data, traceparent } : data;
  };
  return {
    queue: def.queue,
    name: def.name,
    timings: def.timings,
    carriesTrace,
    ...(def.fairGroup ? { fairGroup: def.fairGroup } : {}),
    jobId: def.jobId,
    parse: (data) => ((validate ??= ajv.compile(def.schema as object))(data) ? (data as T) : null),
    spec: (data, opts = {}) => {
      const jobId = def.jobId(data);
      if (jobId.includes(':')) throw new Error(`job id ${jobId} contains ':'`);
      return { name: def.name, data: traced(data), opts: { ...def.options, ...opts, jobId } };
    },
  };
}
