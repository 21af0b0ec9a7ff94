/** Something the worker runs and must stop on shutdown (a BullMQ worker, a timer loop...). */
export interface Component {
  name: string;
  /** Stops taking new work and waits for in-flight work to finish. */
  close(): Promise<void>;
}
