/**
 * Frozen: the code migration 020 (../../020_partitioning.ts) runs, as it was when 020 was
 * written. A migration must do the same to every database whenever it runs, so nothing here
 * changes once released, and no live code imports it (eslint.config.mjs refuses an import of
 * `migrations/frozen` from packages' code outside the migrations). Live partitioning (the
 * layout, maintenance, retention) is packages/db/src/partitions; a change to what 020 made is
 * a new migration. Benchmarks of the online conversion (bench/scale.ts) run this code.
 */
export { convertToPartitioned, type ConvertOptions, type ConvertResult } from './convert';
export { dropCaptureLog } from './capture';
export { PARTITIONED_TABLES, type PartitionedTable } from './spec';
