/**
 * Leads: the one module of their lifecycle (create, update, capture from a call, CSV import),
 * each transition one transaction that also emits its events (docs/API.md, Leads).
 */
export * from './errors';
export * from './schema';
export { normalizePhone } from '@switchboard/phone';
export * from './fields';
export * from './events';
export * from './leads';
export * from './call-capture';
export * from './import/csv';
export * from './import/rows';
export * from './import/batch';
export * from './import/run';
export * from './import/stage';
export * from './import/view';
