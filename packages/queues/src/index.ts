/** Queue names, typed job payloads, default job options and Redis connection factories. */
export * from './connection';
export * from './names';
export * from './jobs';
export * from './queues';
export * from './enqueue';
