// The worker's observability settings: read once from the environment, and what they make
// of the Temporal runtime.
import pino from 'pino';
import { parseWorkerConfig } from '../../../workers/config';
import { workerRuntimeOptions } from '../../../workers/runtime';

describe('observability settings', () => {
  it('default to Karpenter\'s metrics port, the SDK exporter beside it, all interfaces, info logs', () => {
    const config = parseWorkerConfig({});
    expect([config.AUTONODE_METRICS_PORT, config.AUTONODE_TEMPORAL_METRICS_PORT, config.AUTONODE_METRICS_HOST, config.AUTONODE_LOG_LEVEL]).toEqual([8080, 9464, '0.0.0.0', 'info']);
  });

  it('take 0 as off, and refuse a port that is none, naming the variable', () => {
    expect(parseWorkerConfig({ AUTONODE_METRICS_PORT: '0', AUTONODE_TEMPORAL_METRICS_PORT: '0' })).toEqual(expect.objectContaining({ AUTONODE_METRICS_PORT: 0, AUTONODE_TEMPORAL_METRICS_PORT: 0 }));
    expect(() => parseWorkerConfig({ AUTONODE_METRICS_PORT: '70000' })).toThrow(/AUTONODE_METRICS_PORT/);
    expect(() => parseWorkerConfig({ AUTONODE_TEMPORAL_METRICS_PORT: 'http' })).toThrow(/AUTONODE_TEMPORAL_METRICS_PORT/);
    expect(() => parseWorkerConfig({ AUTONODE_LOG_LEVEL: 'verbose' })).toThrow(/AUTONODE_LOG_LEVEL/);
  });

  it('take 10 workflow tasks at once unless AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS says otherwise (the SDK needs at least 2)', () => {
    expect(parseWorkerConfig({}).AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS).toBe(10);
    expect(parseWorkerConfig({ AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS: '40' }).AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS).toBe(40);
    expect(() => parseWorkerConfig({ AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS: '1' })).toThrow(/AUTONODE_MAX_CONCURRENT_WORKFLOW_TASKS/);
  });

  it('leave the workflow cache to the memory budget (workers/sizing.ts) unless AUTONODE_MAX_CACHED_WORKFLOWS sizes it', () => {
    expect(parseWorkerConfig({}).AUTONODE_MAX_CACHED_WORKFLOWS).toBeUndefined();
    expect(parseWorkerConfig({ AUTONODE_MAX_CACHED_WORKFLOWS: '10000' }).AUTONODE_MAX_CACHED_WORKFLOWS).toBe(10_000);
    expect(() => parseWorkerConfig({ AUTONODE_MAX_CACHED_WORKFLOWS: '-1' })).toThrow(/AUTONODE_MAX_CACHED_WORKFLOWS/);
  });

  it('leave the steady resync to the workflow unless AUTONODE_STEADY_RESYNC names a duration of at least 1s', () => {
    expect(parseWorkerConfig({}).AUTONODE_STEADY_RESYNC).toBeUndefined();
    expect(parseWorkerConfig({ AUTONODE_STEADY_RESYNC: '30m' }).AUTONODE_STEADY_RESYNC).toBe('30m');
    expect(parseWorkerConfig({ AUTONODE_STEADY_RESYNC: '1h30m' }).AUTONODE_STEADY_RESYNC).toBe('1h30m');
    for (const bad of ['30 minutes', 'Never', '500ms', '']) expect(() => parseWorkerConfig({ AUTONODE_STEADY_RESYNC: bad })).toThrow(/AUTONODE_STEADY_RESYNC/);
  });

  it('bind the SDK\'s Prometheus exporter with Prometheus-style names, or leave it off at port 0', () => {
    const logger = pino({ enabled: false });
    expect(workerRuntimeOptions({ logger, temporalMetrics: { host: '0.0.0.0', port: 9464 } }).telemetryOptions?.metrics).toEqual({
      prometheus: { bindAddress: '0.0.0.0:9464', countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true },
    });
    expect(workerRuntimeOptions({ logger, temporalMetrics: { host: '0.0.0.0', port: 0 } }).telemetryOptions?.metrics).toBeUndefined();
    // Core's own log lines come to the same JSON logger
    expect(workerRuntimeOptions({ logger }).telemetryOptions?.logging).toEqual({ filter: { core: 'WARN', other: 'ERROR' }, forward: {} });
  });
});
