/** Time partitioning of the history tables: layout, online conversion, maintenance. */
export * from './spec';
export {
  attachedPartitions,
  contiguousSpan,
  ensureAhead,
  partitionRanges,
  isPartitioned,
} from './catalog';
export { convertToPartitioned, type ConvertOptions, type ConvertResult } from './convert';
export { dropCaptureLog } from './capture';
export { runMaintenance, type MaintenanceOptions, type MaintenanceReport } from './maintenance';
export { dropBefore } from './drop';
export {
  atOrAfterFloorSql,
  lowerDeliveriesFloorSql,
  PENDING_FLOOR_SWEEP_MS,
  sweepPendingFloor,
  type FloorTable,
} from './pending-floors';
