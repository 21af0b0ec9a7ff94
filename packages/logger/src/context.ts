import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Fields every log line written inside a unit of work carries: `request_id`, `tenant_id`,
 * `key_id` while the API serves a request; `event_id`, `delivery_id`, `sms_id`,
 * `campaign_id`... while the worker runs a job. The store is per unit of work (never
 * shared between two), so adding to it cannot leak fields into another request's lines.
 */
export type LogFields = Record<string, string | number | undefined>;

const storage = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` added to the fields of the enclosing unit of work, if any. */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...fields }, fn);
}

/**
 * Adds fields learnt midway (the tenant once the key is known) to the current unit of
 * work; a no-op outside one.
 */
export function addLogContext(fields: LogFields): void {
  const store = storage.getStore();
  if (store) Object.assign(store, fields);
}

/**
 * The id of the API request being served, if any: a job that request causes carries it, so
 * the worker's lines about that job carry it too.
 */
export function currentRequestId(): string | undefined {
  const id = storage.getStore()?.request_id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * The fields of the current unit of work (pino's `mixin`), as a copy: pino merges a line's
 * own fields (`err`, `callId`...) into the object the mixin returns, so handing it the store
 * itself would make those fields stick to every later line of the unit of work.
 */
export function currentLogFields(): LogFields {
  const store = storage.getStore();
  return store ? { ...store } : {};
}
