export { serveMetrics } from './metrics-server';
