import { Runtime, type RuntimeOptions } from '@temporalio/worker';
import { type Logger } from 'pino';
import { temporalLogger } from './logging';

export interface WorkerRuntimeOptions {
  logger: Logger;
  /** the SDK's Prometheus exporter; port 0 (or absent) leaves it off */
  temporalMetrics?: { host: string; port: number };
  /** default: Temporal's own (SIGINT, SIGTERM, …) */
  shutdownSignals?: NodeJS.Signals[];
}

/**
 * The Temporal runtime of a worker process: every SDK log line (workflow, activity, worker,
 * and Core's, forwarded) through the JSON logger, and the SDK's worker metrics on their own
 * Prometheus port.
 *
 * A port of their own rather than merged into /metrics: Core serves them itself (Rust, off
 * the event loop), and the alternative, the SDK's *experimental* buffered exporter, hands
 * each update to JS to re-aggregate, and drops updates when its buffer fills. Names follow
 * Prometheus' conventions: counters end in `_total`, durations in seconds with their unit
 * (e.g. `temporal_request_latency_seconds`).
 */
export function workerRuntimeOptions(options: WorkerRuntimeOptions): RuntimeOptions {
  const metrics = options.temporalMetrics;
  return {
    logger: temporalLogger(options.logger),
    ...(options.shutdownSignals ? { shutdownSignals: options.shutdownSignals } : {}),
    telemetryOptions: {
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      ...(metrics && metrics.port > 0
        ? {
            metrics: {
              prometheus: { bindAddress: `${metrics.host}:${metrics.port}`, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true },
            },
          }
        : {}),
    },
  };
}

/** Once per process, before any connection or worker exists (the Runtime is a singleton). */
export function installWorkerRuntime(options: WorkerRuntimeOptions): Runtime {
  return Runtime.install(workerRuntimeOptions(options));
}
