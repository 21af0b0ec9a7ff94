/**
 * Time partitioning of the history tables: layout and maintenance. The online conversion
 * that partitioned them is migration 020's own code (../migrations/frozen/020_partitioning).
 */
export * from './spec';
export { attachedPartitions, contiguousSpan, ensureAhead, partitionRanges } from './catalog';
export { runMaintenance, type MaintenanceOptions, type MaintenanceReport } from './maintenance';
export { dropBefore } from './drop';
export {
  atOrAfterFloorSql,
  lowerDeliveriesFloorSql,
  PENDING_FLOOR_SWEEP_MS,
  sweepPendingFloor,
  type FloorTable,
} from './pending-floors';
