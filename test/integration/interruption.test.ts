// Interruption handling on the real stack: EventBridge's messages sent into an SQS queue on
// moto, the cluster's interruption workflow polling it, and what each kind does to spot
// nodes that the provisioner launched and simulated kubelets run — within 5 s of the send.
// Then the queue's hygiene (100 malformed messages, another cluster's, an unknown instance:
// all deleted, the worker fine) and no double action for a node already draining.
import { AppsV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand, SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { staticCredentialsProvider, endpointPolicyFromEnv } from '../../activities/cloud';
import { createSqsClientFactory } from '../../activities/interruption/sqs';
import { interruptionWorkflowId, provisionerWorkflowId } from '../../core/lifecycle';
import { type InterruptionStatus } from '../../workflows/interruption';
import { type ProvisionerStatus } from '../../workflows/provisioner';
import { watchWorkflowId } from '../../workflows/watch';
import { aRebalanceRecommendation, aScheduledChange, aSpotInterruption, aStateChange, body } from '../../dev/interruption-events';
import { activityCalls, recordHistory, runHistoryWith } from '../support/histories';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';
import { parseExposition, valueOf } from '../support/prometheus';
import { loadStackInfo } from '../support/stack';

jest.setTimeout(400_000);

const WITHIN = 5_000;

describe('interruption: EventBridge messages from an SQS queue (real stack, moto SQS)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  let sqs: SQSClient;
  let queueUrl: string;
  let queueName: string;
  let namespace: string;
  let pool: string;
  let cluster: { name: string; region: string };
  /** the six nodes by the Deployment whose pod they run: web (A-D), spot-app (E), guarded (F) */
  const nodes: Record<'A' | 'B' | 'C' | 'D' | 'E' | 'F', { claim: string; node: string; instance: string; zone: string; type: string }> = {} as never;

  beforeAll(async () => {
    lh = await startLifecycleHarness();
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    namespace = `intr-${lh.id}`;
    pool = `intr-${lh.id}`;
    queueName = `autonode-interruption-${lh.id}`;
    const stack = loadStackInfo();
    sqs = createSqsClientFactory({ endpoint: stack.ec2.endpoint, credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }), endpointPolicy: endpointPolicyFromEnv(process.env) })(cluster);
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: queueName }))).QueueUrl ?? '';
    await lh.guest.core.createNamespace({ body: { metadata: { name: namespace } } });
    await lh.t.client.workflow.start('watchWorkflow', { taskQueue: lh.taskQueues.control, workflowId: watchWorkflowId(cluster.name), args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: 'Never' }] });
    await createSpotPool();
    // one m5.large (2 vCPU) per 1500m pod: six spot nodes
    await deploy('web', 4);
    await deploy('spot-app', 1);
    await deploy('guarded', 1);
    const placed = await eventually('six initialized spot nodes, each running its pod', async () => {
      const claims = (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool);
      const initialized = claims.filter((c) => c.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True'));
      const pods = (await lh.guest.core.listNamespacedPod({ namespace })).items;
      const running = pods.filter((p) => p.status?.phase === 'Running');
      // thrown, not returned: a timeout then says where it stood
      if (claims.length !== 6 || initialized.length !== 6 || pods.length !== 6 || running.length !== 6) {
        throw new Error(`${claims.length} claims (${initialized.length} initialized), ${pods.length} pods (${running.length} Running)`);
      }
      return pods.map((p) => {
        const claim = claims.find((c) => c.status?.nodeName === p.spec?.nodeName)!;
        const providerId = claim.status!.providerID!;
        return { app: p.metadata!.labels!['app']!, claim: claim.metadata.name, node: claim.status!.nodeName!, instance: providerId.split('/').pop()!, zone: claim.metadata.labels!['topology.kubernetes.io/zone']!, type: claim.metadata.labels!['node.kubernetes.io/instance-type']! };
      });
    }, 240_000);
    const web = placed.filter((p) => p.app === 'web');
    [nodes.A, nodes.B, nodes.C, nodes.D] = web as [typeof web[number], typeof web[number], typeof web[number], typeof web[number]];
    nodes.E = placed.find((p) => p.app === 'spot-app')!;
    nodes.F = placed.find((p) => p.app === 'guarded')!;
    await lh.t.client.workflow.start('interruptionWorkflow', { taskQueue: lh.taskQueues.control, workflowId: interruptionWorkflowId(cluster.name), args: [{ cluster, taskQueues: lh.taskQueues, queue: queueName }] });
  });
  afterAll(async () => {
    await sqs?.send(new DeleteQueueCommand({ QueueUrl: queueUrl })).catch(() => undefined);
    sqs?.destroy();
    await lh?.close();
  });

  async function createSpotPool() {
    await lh.guest.customObjects.createClusterCustomObject({
      group: 'karpenter.sh',
      version: 'v1',
      plural: 'nodepools',
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: pool },
        spec: {
          disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' },
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: lh.nodeClassName },
              requirements: [
                { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
              ],
              taints: [{ key: 'autonode.io/test', value: lh.id, effect: 'NoSchedule' }],
              expireAfter: 'Never',
            },
          },
        },
      },
    });
  }

  async function deploy(name: string, replicas: number) {
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name },
        spec: {
          replicas,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              nodeSelector: { 'karpenter.sh/nodepool': pool },
              tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: lh.id, effect: 'NoSchedule' }],
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '1500m', memory: '512Mi' } } }],
            },
          },
        },
      },
    });
  }

  const send = async (event: unknown) => {
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body(event) }));
    return Date.now();
  };
  const claimOf = (name: string) => lh.claims.get(name);
  const draining = async (name: string) => {
    const claim = await claimOf(name);
    return claim === undefined || claim.metadata.deletionTimestamp !== undefined;
  };
  const eventsOf = async (name: string, reason: string) =>
    (await lh.guest.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name},reason=${reason}` })).items;
  const interruption = () => lh.t.client.workflow.getHandle(interruptionWorkflowId(cluster.name)).query<InterruptionStatus>('status');
  const scrape = async () => parseExposition(await (await fetch(`${lh.metricsUrl}/metrics`)).text());
  const withinDeadline = async <T>(what: string, sentAt: number, probe: () => Promise<T | undefined | false>) => {
    const value = await eventually(what, probe, WITHIN + 2_000);
    expect(Date.now() - sentAt).toBeLessThanOrEqual(WITHIN);
    return value;
  };

  it('a rebalance recommendation → an Event on the NodeClaim and its Node, and nothing else', async () => {
    const sentAt = await send(aRebalanceRecommendation(nodes.A.instance, { time: new Date().toISOString() }));
    await withinDeadline('SpotRebalanceRecommendation Events', sentAt, async () => (await eventsOf(nodes.A.claim, 'SpotRebalanceRecommendation')).length > 0 && (await eventsOf(nodes.A.node, 'SpotRebalanceRecommendation')).length > 0);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await draining(nodes.A.claim)).toBe(false);
    const node = await lh.guest.core.readNode({ name: nodes.A.node });
    expect(node.spec?.taints?.map((t) => t.key)).not.toContain('karpenter.sh/disrupted');
  });

  it.each([
    ['an AWS Health scheduled change', 'B', 'InstanceUnhealthy', 'scheduled_change', (id: string) => aScheduledChange([id], { time: new Date().toISOString() })],
    ['an instance stopping', 'C', 'InstanceStopping', 'instance_stopped', (id: string) => aStateChange(id, 'stopping', { time: new Date().toISOString() })],
    ['an instance terminated', 'D', 'InstanceTerminating', 'instance_terminated', (id: string) => aStateChange(id, 'terminated', { time: new Date().toISOString() })],
  ] as const)('%s → the NodeClaim is cordoned and drained (deleted; its workflow drains and terminates)', async (_what, key, reason, kind, event) => {
    const target = nodes[key];
    const sentAt = await send(event(target.instance));
    await withinDeadline(`${target.claim} deleted`, sentAt, () => draining(target.claim));
    expect((await eventsOf(target.claim, reason)).length).toBeGreaterThan(0);
    expect((await eventsOf(target.claim, 'TerminatingOnInterruption')).length).toBe(1);
    await eventually(`${target.claim} gone and its instance terminated`, async () => (await claimOf(target.claim)) === undefined && /shutting-down|terminated/.test((await lh.instanceState(target.instance)) ?? ''), 90_000);
    const scraped = await scrape();
    expect(valueOf(scraped, 'karpenter_nodeclaims_disrupted_total', { cluster: cluster.name, reason: kind, nodepool: pool })).toBe(1);
    expect(valueOf(scraped, 'karpenter_interruption_received_messages_total', { cluster: cluster.name, message_type: kind })).toBe(1);
    // its pod, drained, runs again on a node the provisioner launched (every node full again before the next test)
    await eventually('the web pods Running again, every node of the pool initialized', async () => {
      const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=web' })).items.filter((p) => p.metadata?.deletionTimestamp === undefined);
      const claims = (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool);
      return pods.length === 4 && pods.every((p) => p.status?.phase === 'Running') && claims.every((c) => c.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True'));
    }, 180_000);
  });

  it('a spot interruption warning → cordoned at once, the offering held unavailable, the replacement launched first, then the drain; the pod runs on the replacement', async () => {
    const E = nodes.E;
    const sentAt = await send(aSpotInterruption(E.instance, { time: new Date().toISOString() }));
    await withinDeadline('the node cordoned (karpenter.sh/disrupted), SpotInterrupted, and the offering unavailable in the provisioner', sentAt, async () => {
      // each missing piece says so: a timeout names the one still missing
      const node = await lh.guest.core.readNode({ name: E.node });
      if (!node.spec?.taints?.some((t) => t.key === 'karpenter.sh/disrupted')) throw new Error(`${E.node} not cordoned yet; the workflow's last messages: ${JSON.stringify((await interruption()).recent.slice(-2))}`);
      if ((await eventsOf(E.claim, 'SpotInterrupted')).length === 0) throw new Error(`no SpotInterrupted Event on ${E.claim} yet`);
      const provisioner = await lh.t.client.workflow.getHandle(provisionerWorkflowId(cluster.name)).query<ProvisionerStatus>('status');
      if (!provisioner.unavailableOfferings.some((o) => o.instanceType === E.type && o.zone === E.zone && o.capacityType === 'spot')) throw new Error(`the provisioner holds only ${JSON.stringify(provisioner.unavailableOfferings)}`);
      return true;
    });
    const replaced = await eventually('the claim replaced, then drained', async () => (await interruption()).replaced.find((r) => r.nodeClaim === E.claim), 120_000);
    expect(replaced.because).toBe('the replacements were initialized');
    expect(replaced.replacements).toHaveLength(1);
    const replacement = (await claimOf(replaced.replacements[0]!))!;
    // the launch was told too: the replacement carries the held offering, and did not land on it
    expect(replacement.metadata.annotations?.['autonode.io/unavailable-offerings']).toBe(`${E.type}/${E.zone}/spot`);
    const landed = replacement.metadata.labels ?? {};
    expect(`${landed['node.kubernetes.io/instance-type']}/${landed['topology.kubernetes.io/zone']}/${landed['karpenter.sh/capacity-type']}`).not.toBe(`${E.type}/${E.zone}/spot`);
    // planned without the offering that was taken away
    const plans = (await activityCalls(lh.t.client, interruptionWorkflowId(cluster.name))).filter((c) => c.type === 'planReplacements');
    expect(plans.map((c) => (c.input as { nodes: string[]; unavailable: unknown[] }))).toEqual([{ ...(plans[0]!.input as object), nodes: [E.node], unavailable: [{ instanceType: E.type, zone: E.zone, capacityType: 'spot' }] }]);
    await eventually('the pod Running on the replacement, the interrupted claim gone', async () => {
      const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=spot-app' })).items;
      return pods.length === 1 && pods[0]!.status?.phase === 'Running' && pods[0]!.spec?.nodeName === replacement.status?.nodeName && (await claimOf(E.claim)) === undefined;
    }, 120_000);
    const scraped = await scrape();
    expect(valueOf(scraped, 'karpenter_nodeclaims_disrupted_total', { cluster: cluster.name, reason: 'spot_interrupted', nodepool: pool })).toBe(1);
    expect(valueOf(scraped, 'karpenter_interruption_message_queue_duration_seconds_count', { cluster: cluster.name })).toBeGreaterThanOrEqual(4);
    // the run of the interruption workflow that replaced this claim, for test/unit/replay.test.ts
    await recordHistory('interruption-replace-first', () => runHistoryWith(lh.t.client, interruptionWorkflowId(cluster.name), ['planReplacements', 'createClaims', 'drainInterrupted']));
  });

  it('100 malformed messages, one for an unknown instance and one of another cluster → all deleted, counted, and the worker goes on', async () => {
    const before = await scrape();
    const count = (s: typeof before, name: string, labels: Record<string, string>) => valueOf(s, name, { cluster: cluster.name, ...labels }) ?? 0;
    const valid = body(aSpotInterruption('i-0123456789abcdef0'));
    const malformed = Array.from({ length: 100 }, (_, n) => {
      switch (n % 5) {
        case 0:
          return `not json ${n}`;
        case 1:
          return valid.slice(0, 10 + n); // truncated
        case 2:
          return JSON.stringify([n]); // a list, not an event
        case 3:
          return body({ ...aSpotInterruption('i-0'), detail: { 'instance-id': n } }); // a number for the instance id
        default:
          return body({ ...aStateChange('i-0', 'stopping'), time: `day ${n}` }); // not a time
      }
    });
    for (let i = 0; i < malformed.length; i += 10) {
      await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: malformed.slice(i, i + 10).map((MessageBody, n) => ({ Id: String(n), MessageBody })) }));
    }
    await send(aSpotInterruption('i-00000000000000000')); // no such instance
    await send(aStateChange('i-0aaaaaaaaaaaaaaaa', 'terminated', { account: '999999999999', region: 'eu-west-1' })); // another cluster's
    await eventually('the queue empty (nothing waiting, nothing in flight)', async () => {
      const a = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))).Attributes ?? {};
      return a['ApproximateNumberOfMessages'] === '0' && a['ApproximateNumberOfMessagesNotVisible'] === '0';
    }, 60_000);
    const after = await scrape();
    expect(count(after, 'autonode_interruption_ignored_messages_total', { reason: 'unparseable' }) - count(before, 'autonode_interruption_ignored_messages_total', { reason: 'unparseable' })).toBe(100);
    expect(count(after, 'autonode_interruption_ignored_messages_total', { reason: 'no_nodeclaim' }) - count(before, 'autonode_interruption_ignored_messages_total', { reason: 'no_nodeclaim' })).toBe(2);
    expect(count(after, 'karpenter_interruption_deleted_messages_total', {}) - count(before, 'karpenter_interruption_deleted_messages_total', {})).toBe(102);
    const status = await interruption();
    expect(status.lastError).toBeUndefined();
    expect((await lh.t.client.workflow.getHandle(interruptionWorkflowId(cluster.name)).describe()).status.name).toBe('RUNNING');
    // and it still acts: a rebalance recommendation for A is told within the deadline
    const sentAt = await send(aRebalanceRecommendation(nodes.A.instance, { time: new Date().toISOString() }));
    // (the flood pushed every older message out of the status' recent list)
    await withinDeadline('the next message handled', sentAt, async () => (await interruption()).recent.some((r) => r.kind === 'rebalance_recommendation' && r.claims.some((c) => c.name === nodes.A.claim && c.action === 'notify')));
  });

  it('a spot interruption while the same node drains (kubectl delete, held by a PDB) doubles nothing: no second deletion, no replacement, no count', async () => {
    const F = nodes.F;
    const policy = lh.guest.config.makeApiClient(PolicyV1Api);
    await policy.createNamespacedPodDisruptionBudget({ namespace, body: { metadata: { name: 'keep-guarded' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } } } });
    await eventually('the PDB to see the pod', async () => (await policy.readNamespacedPodDisruptionBudget({ namespace, name: 'keep-guarded' })).status?.currentHealthy === 1);
    await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', name: F.claim });
    await eventually('the drain held by the PDB', async () => (await claimOf(F.claim))?.status?.conditions?.some((c) => c.type === 'Drained' && c.status === 'False' && /PodDisruptionBudget/.test(c.message ?? '')));
    const deletionTimestamp = (await claimOf(F.claim))!.metadata.deletionTimestamp;
    const claimsBefore = (await lh.claims.list()).map((c) => c.metadata.name).sort();
    const before = await scrape();

    // EventBridge may deliver the same warning twice
    const sentAt = await send(aSpotInterruption(F.instance, { id: 'dup-1', time: new Date().toISOString() }));
    await send(aSpotInterruption(F.instance, { id: 'dup-2', time: new Date().toISOString() }));
    const seen = await withinDeadline('both warnings handled', sentAt, async () => {
      const handled = (await interruption()).recent.filter((r) => r.claims.some((c) => c.name === F.claim) && r.kind === 'spot_interrupted');
      return handled.length === 2 ? handled : undefined;
    });
    expect(seen.flatMap((r) => r.claims.map((c) => c.action))).toEqual(['none', 'none']);
    await new Promise((r) => setTimeout(r, 5_000));
    const after = await scrape();
    expect(valueOf(after, 'karpenter_nodeclaims_disrupted_total', { cluster: cluster.name, reason: 'spot_interrupted', nodepool: pool })).toBe(valueOf(before, 'karpenter_nodeclaims_disrupted_total', { cluster: cluster.name, reason: 'spot_interrupted', nodepool: pool }));
    expect((await claimOf(F.claim))?.metadata.deletionTimestamp).toBe(deletionTimestamp);
    expect((await lh.claims.list()).map((c) => c.metadata.name).sort()).toEqual(claimsBefore);
    expect(await eventsOf(F.claim, 'TerminatingOnInterruption')).toHaveLength(0);
    expect((await interruption()).replacing).toEqual({});
    // Karpenter still marks the offering: it was interrupted, whoever drains the node
    const provisioner = await lh.t.client.workflow.getHandle(provisionerWorkflowId(cluster.name)).query<ProvisionerStatus>('status');
    expect(provisioner.unavailableOfferings).toEqual(expect.arrayContaining([expect.objectContaining({ instanceType: F.type, zone: F.zone, capacityType: 'spot' })]));

    // released, the drain (the only one) finishes
    await policy.deleteNamespacedPodDisruptionBudget({ namespace, name: 'keep-guarded' });
    await eventually(`${F.claim} gone`, async () => (await claimOf(F.claim)) === undefined, 120_000);
  });
});
