/** The job catalog (queues, payload schemas, job ids, options), producers and connections. */
export * from './connection';
export * from './closed-connections';
export * from './catalog';
export * from './job-definition';
export * from './names';
export * from './jobs';
export * from './queues';
export * from './enqueue';
export * from './fair';
