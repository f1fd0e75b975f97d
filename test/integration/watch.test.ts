import { nodeClaimWorkflowId, type NodeClaimResult, type NodeClaimStatusView } from '../../core/lifecycle';
import { GC_FAILED_REASON } from '../../activities/watch/gc-failure-event';
import { watchWorkflowId, type WatchStatus } from '../../workflows/watch';
import { submitCsr } from '../../dev/simkubelet/csr-requests';
import { createCsrPem, generateKubeletKey } from '../../dev/simkubelet/pki';
import { aLaunchRequest } from '../support/cloud';
import { recordHistory } from '../support/histories';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

describe('cluster watch workflow (real guest API server)', () => {
  let lh: LifecycleHarness;
  beforeAll(async () => {
    lh = await startLifecycleHarness();
  });
  afterAll(async () => {
    await lh?.close();
  });

  it('gives a kubectl-created NodeClaim its workflow, and turns `kubectl delete nodeclaim` into drain + terminate', async () => {
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    const watch = await lh.t.client.workflow.start('watchWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: watchWorkflowId(cluster.name),
      args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: '2s', gcMinAge: '1s' }],
    });
    // a failure below must not leave this watcher collecting beside the next test's
    try {
      // Created as an admin would with kubectl: nobody starts a workflow for it by hand.
      const name = `lc-${lh.id}-kubectl`;
      await lh.createNodeClaim(name);
      const claim = await eventually('the watcher-started workflow to initialize the node', async () => {
        const c = await lh.claims.get(name);
        return c?.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True') ? c : undefined;
      });
      const handle = lh.t.client.workflow.getHandle(nodeClaimWorkflowId(cluster.name, name));
      // The activity writes the Initialized condition before the workflow records the phase
      // from its result: a query in between still sees Registered (seen once in CI).
      const view = await eventually('the workflow to record the Initialized phase', async () => {
        const status = await handle.query<NodeClaimStatusView>('status');
        return status.phase === 'Initialized' ? status : undefined;
      }, 30_000);
      expect(view.phase).toBe('Initialized');

      // A CSR naming the node reaches the workflow as a signal carrying only its name. Made
      // here, once the watcher knows the node (a kubelet asking for a new serving certificate):
      // the kubelet's first CSRs may be answered by the workflow's own review before the
      // watcher learns the node's name, and then nothing is left to route (seen once in CI;
      // the routing of a CSR that comes before the name is test/unit/watch/router.test.ts's).
      const signalsNow = async () => ((await handle.fetchHistory()).events ?? []).flatMap((e) => (e.workflowExecutionSignaledEventAttributes ? [e.workflowExecutionSignaledEventAttributes.signalName] : []));
      const before = (await signalsNow()).filter((s) => s === 'csrCreated').length;
      const nodeName = claim.status?.nodeName ?? '';
      const requestPem = await createCsrPem(await generateKubeletKey(), { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'], dnsNames: [nodeName] });
      const csrName = await submitCsr(lh.guest.certificates, { requestPem, signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'server auth'] });
      await eventually(`a csrCreated signal for ${csrName}`, async () => (await signalsNow()).filter((s) => s === 'csrCreated').length > before, 30_000);
      await lh.guest.certificates.deleteCertificateSigningRequest({ name: csrName });

      await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name });
      const result: NodeClaimResult = await handle.result();
      expect(result.end).toEqual({ kind: 'deleted', by: 'nodeclaim' });
      expect(await lh.instanceState(result.instance?.instanceId ?? '')).toMatch(/shutting-down|terminated/);
      await eventually('the NodeClaim to be gone (finalizer released)', async () => (await lh.claims.get(name)) === undefined);
      await eventually('the Node to be gone', async () => (await lh.guest.core.listNode()).items.every((n) => n.metadata?.name !== claim.status?.nodeName));
      const after = await handle.fetchHistory();
      const afterSignals = (after.events ?? []).flatMap((e) => (e.workflowExecutionSignaledEventAttributes ? [e.workflowExecutionSignaledEventAttributes.signalName] : []));
      expect(afterSignals).toContain('nodeClaimChanged');

      // An instance tagged for a NodeClaim that does not exist (a leak) is collected.
      const ghost = `lc-${lh.id}-ghost`;
      lh.silent.add(ghost);
      const leaked = await lh.h.provider.launch(await aLaunchRequest(lh.h, { nodeClaim: { name: ghost, uid: 'no-such-claim' }, capacityTypes: ['on-demand'] }));
      const collected = await eventually('the leaked instance to be collected', async () => {
        const s = await watch.query<WatchStatus>('status');
        return s.lastGc?.terminated.includes(leaked.instance.providerId) ? s : undefined;
      });
      expect(collected.instancesCollected).toBeGreaterThanOrEqual(1);
      expect(await lh.instanceState(leaked.instance.instanceId)).toMatch(/shutting-down|terminated/);
    } finally {
      await watch.cancel();
    }
    await expect(watch.result()).resolves.toBeUndefined();
    // refreshes the history test/unit/replay.test.ts replays (see nodeclaim-lifecycle.test.ts)
    await recordHistory('watch-with-gc', () => watch.fetchHistory());
  });

  it('shows failed GC rounds in its status and writes one Warning Event per run of failures', async () => {
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    const gcEvents = async () =>
      (await lh.guest.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `reason=${GC_FAILED_REASON}` })).items.filter((e) =>
        e.message?.includes(`cluster ${cluster.name} `),
      );
    // GC lists the cluster's instances first: refuse that, as an IAM policy missing the permission would.
    lh.h.proxy.inject({ kind: 'unauthorized', action: 'DescribeInstances', times: 100_000 });
    const watch = await lh.t.client.workflow.start('watchWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: `${watchWorkflowId(cluster.name)}-gc-failures`,
      args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: '1s', gcMinAge: '1s' }],
    });
    try {
      const failing = await eventually('three GC rounds in a row to fail', async () => {
        const s = await watch.query<WatchStatus>('status');
        return (s.lastGcError?.consecutiveFailures ?? 0) >= 3 ? s : undefined;
      });
      expect(failing.lastGcError).toEqual(expect.objectContaining({ warningEventRecorded: true }));
      expect(failing.lastGcError?.message).toMatch(/DescribeInstances/);
      const events = await gcEvents();
      expect(events).toHaveLength(1);
      expect(events[0]).toEqual(expect.objectContaining({
        type: 'Warning',
        count: 1,
        involvedObject: expect.objectContaining({ kind: 'Namespace', name: 'default' }),
        source: expect.objectContaining({ component: 'karpenter' }),
      }));
      expect(events[0]?.message).toMatch(/DescribeInstances/);
    } finally {
      lh.h.proxy.reset();
    }

    const recovered = await eventually('GC to work again', async () => {
      const s = await watch.query<WatchStatus>('status');
      return s.lastGcError?.consecutiveFailures === 0 ? s : undefined;
    });
    // the error stays visible, older than the round that worked
    expect(recovered.lastGcError?.message).toMatch(/DescribeInstances/);
    expect(Date.parse(recovered.lastGc?.at ?? '')).toBeGreaterThan(Date.parse(recovered.lastGcError?.at ?? ''));
    expect((await gcEvents()).map((e) => e.count)).toEqual([1]);

    await watch.cancel();
    await expect(watch.result()).resolves.toBeUndefined();
    // the patched('surface-gc-failures') path; watch-gc-failures-before-patch.json is the
    // same scenario recorded once from the code before the patch (not refreshable)
    await recordHistory('watch-gc-failures', () => watch.fetchHistory());
  });
});
