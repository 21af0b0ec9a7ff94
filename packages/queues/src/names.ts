import { catalog, type CatalogKey } from './catalog';

/** Queue names by catalog key (metrics, tests). Spelled once, in the catalog. */
export const QUEUES = Object.fromEntries(
  Object.entries(catalog).map(([key, def]) => [key, def.queue]),
) as { [K in CatalogKey]: (typeof catalog)[K]['queue'] };

export type QueueName = (typeof QUEUES)[CatalogKey];
