import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * One structured logger and one EMF metrics buffer per execution environment; the chains
 * (http/chain.ts, worker-chain.ts) put the Lambda context on every log line and flush the metrics.
 * Locally, `POWERTOOLS_METRICS_DISABLED=true` keeps EMF documents off the console.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'tillgate' });

export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'Tillgate',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'tillgate',
  // Two stages in one account and region must not add up in one graph.
  defaultDimensions: { stage: process.env.TILLGATE_STAGE ?? 'local' },
});

/** Records the per-operation request metrics the dashboard and alarms read; logMetrics flushes them. */
export function recordRequestMetrics(operation: string, statusCode: number, latencyMs: number): void {
  metrics.addDimension('operation', operation);
  metrics.addMetric('Requests', MetricUnit.Count, 1);
  metrics.addMetric('Latency', MetricUnit.Milliseconds, latencyMs);
  metrics.addMetric('ServerErrors', MetricUnit.Count, statusCode >= 500 ? 1 : 0);
  metrics.addMetric('ClientErrors', MetricUnit.Count, statusCode >= 400 && statusCode < 500 ? 1 : 0);
}
