// The worker's HTTP endpoint, over a real socket: what Prometheus and the kubelet's probes see.
import { createAutonodeMetrics } from '../../../activities/metrics';
import { startMetricsServer, type MetricsServer, type Readiness } from '../../../workers/metrics-server';
import { workersReadiness } from '../../../workers/workers';
import { parseExposition, valueOf } from '../../support/prometheus';

describe('the metrics endpoint', () => {
  const metrics = createAutonodeMetrics();
  let readiness: Readiness = { ready: false, detail: 'autonode-control INITIALIZED' };
  let server: MetricsServer;
  beforeAll(async () => {
    server = await startMetricsServer({ registry: metrics.registry, readiness: () => readiness, port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => server.close());

  it('serves /metrics in Prometheus\' text format: every autonode metric with its HELP and TYPE, and what was counted', async () => {
    metrics.nodeClaimsCreated.inc({ cluster: 'c1', reason: 'provisioning', nodepool: 'default' }, 3);
    metrics.cloudProviderErrors.inc({ cluster: 'c1', controller: 'launchClaimInstance', method: 'Create', provider: 'aws', error: 'InsufficientCapacityError' });
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    const scraped = parseExposition(text);
    expect(valueOf(scraped, 'karpenter_nodeclaims_created_total', { cluster: 'c1', reason: 'provisioning', nodepool: 'default' })).toBe(3);
    expect(valueOf(scraped, 'karpenter_cloudprovider_errors_total', { cluster: 'c1', controller: 'launchClaimInstance', method: 'Create', provider: 'aws', error: 'InsufficientCapacityError' })).toBe(1);
    expect(Object.fromEntries(scraped.types)).toEqual({
      karpenter_nodeclaims_created_total: 'counter',
      autonode_nodeclaims_launched_total: 'counter',
      karpenter_nodeclaims_terminated_total: 'counter',
      karpenter_nodeclaims_disrupted_total: 'counter',
      karpenter_scheduler_scheduling_duration_seconds: 'histogram',
      karpenter_cloudprovider_duration_seconds: 'histogram',
      karpenter_cloudprovider_errors_total: 'counter',
      karpenter_interruption_received_messages_total: 'counter',
      karpenter_interruption_deleted_messages_total: 'counter',
      karpenter_interruption_message_queue_duration_seconds: 'histogram',
      autonode_interruption_ignored_messages_total: 'counter',
      karpenter_nodes_allocatable: 'gauge',
      karpenter_pods_state: 'gauge',
      autonode_cluster_state_observed_timestamp_seconds: 'gauge',
    });
    expect(text).toMatch(/^# HELP karpenter_nodeclaims_created_total NodeClaims created by autonode/m);
  });

  it('/healthz says the process is up, ready or not', async () => {
    readiness = { ready: false, detail: 'autonode-control STOPPING' };
    const response = await fetch(`${server.url}/healthz`);
    expect([response.status, await response.text()]).toEqual([200, 'ok\n']);
  });

  it('/readyz is 503 with each worker\'s state until every worker runs, then 200', async () => {
    const workers = [
      { options: { taskQueue: 'autonode-control' }, getState: () => 'RUNNING' },
      { options: { taskQueue: 'autonode-cloud' }, getState: () => 'INITIALIZED' },
    ];
    readiness = workersReadiness(workers);
    let response = await fetch(`${server.url}/readyz`);
    expect([response.status, await response.text()]).toEqual([503, 'autonode-control RUNNING\nautonode-cloud INITIALIZED\n']);
    readiness = workersReadiness(workers.slice(0, 1));
    response = await fetch(`${server.url}/readyz`);
    expect([response.status, await response.text()]).toEqual([200, 'autonode-control RUNNING\n']);
    // a process with no workers serves nothing: not ready
    expect(workersReadiness([])).toEqual({ ready: false, detail: 'no workers' });
  });

  it('answers other paths with 404 and other methods with 405', async () => {
    expect((await fetch(`${server.url}/`)).status).toBe(404);
    const post = await fetch(`${server.url}/metrics`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('port 0 picks a free port; a taken one fails to start instead of serving nothing', async () => {
    const port = Number(new URL(server.url).port);
    expect(port).toBeGreaterThan(0);
    await expect(startMetricsServer({ registry: metrics.registry, readiness: () => readiness, port, host: '127.0.0.1' })).rejects.toThrow(/EADDRINUSE/);
  });
});
