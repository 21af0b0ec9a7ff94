/** The event catalog, the subscriber-facing envelope and `emit()` into the outbox. */
export * from './catalog';
export * from './envelope';
export * from './emit';
export * from './docs';
