// Disruption on the real stack, emptiness first: pods become nodes through the provisioner,
// the Deployment scales to zero, and the cluster's disruption workflow removes the empty
// nodes — no more at once than the NodePool's budget allows, never a node carrying
// karpenter.sh/do-not-disrupt — and their instances are terminated.
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { CreateSecurityGroupCommand, DeleteSecurityGroupCommand, DescribeImagesCommand, DescribeInstancesCommand, DescribeLaunchTemplatesCommand, DescribeLaunchTemplateVersionsCommand, ModifyInstanceAttributeCommand } from '@aws-sdk/client-ec2';
import { disruptionWorkflowId } from '../../core/lifecycle';
import { type DisruptionStatus } from '../../workflows/disruption';
import { watchWorkflowId } from '../../workflows/watch';
import { recordHistory, runHistoryWith } from '../support/histories';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

jest.setTimeout(400_000);

describe('disruption: empty nodes go, within budgets (real stack)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  let namespace: string;
  let pool: string;

  beforeAll(async () => {
    lh = await startLifecycleHarness();
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    namespace = `dis-${lh.id}`;
    pool = `dis-${lh.id}`;
    await lh.guest.core.createNamespace({ body: { metadata: { name: namespace } } });
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    await lh.t.client.workflow.start('watchWorkflow', { taskQueue: lh.taskQueues.control, workflowId: watchWorkflowId(cluster.name), args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: 'Never' }] });
    await createPool(pool, { consolidationPolicy: 'WhenEmpty', consolidateAfter: '5s', budgets: [{ nodes: '1' }] });
    await deploy('web', 3, pool);
  });
  afterAll(async () => {
    await lh?.close();
  });

  async function createPool(name: string, disruption: Record<string, unknown>, labels: Record<string, string> = {}, o: { nodeClass?: string; types?: string[] } = {}) {
    await lh.guest.customObjects.createClusterCustomObject({
      group: 'karpenter.sh',
      version: 'v1',
      plural: 'nodepools',
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name },
        spec: {
          disruption,
          template: {
            metadata: { labels },
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: o.nodeClass ?? lh.nodeClassName },
              // m5.large: one 1500m pod per 2-vCPU node
              requirements: [
                { key: 'node.kubernetes.io/instance-type', operator: 'In', values: o.types ?? ['m5.large'] },
                { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              ],
              taints: [{ key: 'autonode.io/test', value: lh.id, effect: 'NoSchedule' }],
              expireAfter: 'Never',
            },
          },
        },
      },
    });
  }

  async function deploy(name: string, replicas: number, nodePool: string, cpu = '1500m') {
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
              nodeSelector: { 'karpenter.sh/nodepool': nodePool },
              tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: lh.id, effect: 'NoSchedule' }],
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu, memory: '512Mi' } } }],
            },
          },
        },
      },
    });
  }

  const claimsOf = async (nodePool: string) => (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === nodePool);
  const claimsOfPool = () => claimsOf(pool);
  const initialized = (c: Awaited<ReturnType<typeof claimsOf>>[number]) => c.status?.conditions?.some((x) => x.type === 'Initialized' && x.status === 'True') ?? false;
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  /**
   * Commits the run of the cluster's disruption workflow that scheduled `activities` as the
   * fixture `name` replayed by test/unit/replay.test.ts (npm run record:histories): a
   * command is carried out within one run, whichever run that was.
   */
  const recordDisruption = (name: string, activities: string[]) =>
    recordHistory(name, () => runHistoryWith(lh.t.client, disruptionWorkflowId(lh.h.cluster.name), activities));
  const startDisruption = () => {
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    return lh.t.client.workflow.start('disruptionWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: disruptionWorkflowId(cluster.name),
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ cluster, taskQueues: lh.taskQueues, pollInterval: '2s', validationDelay: '3s' }],
    });
  };

  it('scale to zero → the empty nodes are removed one at a time (budget nodes: "1"), except the do-not-disrupt one until it is released', async () => {
    const claims = await eventually('three initialized nodes', async () => {
      const all = await claimsOfPool();
      return all.length === 3 && all.every(initialized) ? all : undefined;
    }, 240_000);
    const held = claims[0]!;
    await lh.guest.core.patchNode({ name: held.status!.nodeName!, body: { metadata: { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } } } }, mergePatch);
    const instances = new Map(claims.map((c) => [c.metadata.name, c.status!.providerID!.split('/').pop()!]));

    await apps.patchNamespacedDeploymentScale({ namespace, name: 'web', body: { spec: { replicas: 0 } } }, mergePatch);
    const disruption = await startDisruption();

    // watch: never two of the pool's claims deleting at once
    let mostAtOnce = 0;
    const others = claims.filter((c) => c !== held).map((c) => c.metadata.name);
    await eventually('the two releasable claims gone', async () => {
      const now = await claimsOfPool();
      mostAtOnce = Math.max(mostAtOnce, now.filter((c) => c.metadata.deletionTimestamp !== undefined).length);
      return others.every((n) => !now.some((c) => c.metadata.name === n)) ? true : undefined;
    }, 180_000);
    expect(mostAtOnce).toBe(1);
    for (const name of others) expect(await lh.instanceState(instances.get(name)!)).toMatch(/shutting-down|terminated/);

    // the held node stays, and says why
    await new Promise((r) => setTimeout(r, 8_000));
    expect((await claimsOfPool()).map((c) => c.metadata.name)).toEqual([held.metadata.name]);
    const status = await disruption.query<DisruptionStatus>('status');
    expect(status.blocked).toEqual(expect.arrayContaining([{ nodeClaim: held.metadata.name, method: 'emptiness', reason: 'it has karpenter.sh/do-not-disrupt' }]));
    expect(status.commands).toBeGreaterThanOrEqual(2);
    const events = await lh.guest.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${held.metadata.name},reason=DisruptionBlocked` });
    expect(events.items.map((e) => e.message)).toContain('Cannot disrupt NodeClaim: it has karpenter.sh/do-not-disrupt');

    // released: it goes too
    await lh.guest.core.patchNode({ name: held.status!.nodeName!, body: { metadata: { annotations: { 'karpenter.sh/do-not-disrupt': null } } } }, mergePatch);
    await eventually('the released claim gone', async () => ((await claimsOfPool()).length === 0 ? true : undefined), 120_000);
    expect(await lh.instanceState(instances.get(held.metadata.name)!)).toMatch(/shutting-down|terminated/);
    // a round with an emptiness command: validate, taint, delete, wait for the node to go
    await recordDisruption('disruption-emptiness', ['validateCommand', 'startCommand', 'deleteCandidates', 'commandNodesLeft']);
  });

  it('a NodePool template change drifts every node: each is replaced before it goes, one at a time, and the pods keep running', async () => {
    const drifting = `drift-${lh.id}`;
    await createPool(drifting, { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never', budgets: [{ nodes: '1' }] }, { 'example.com/rev': '1' });
    await deploy('api', 2, drifting);
    const before = await eventually('two initialized nodes running the pods', async () => {
      const all = await claimsOf(drifting);
      const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=api' })).items;
      return all.length === 2 && all.every(initialized) && pods.filter((p) => p.status?.phase === 'Running').length === 2 ? all : undefined;
    }, 240_000);
    const disruption = await startDisruption();

    await lh.guest.customObjects.patchClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: drifting, body: { spec: { template: { metadata: { labels: { 'example.com/rev': '2' } } } } } }, mergePatch);
    // Drifted=True with the reason on the old claims
    await eventually('Drifted=True on the old claims', async () => {
      const all = await claimsOf(drifting);
      return before.every((b) => all.find((c) => c.metadata.name === b.metadata.name)?.status?.conditions?.some((x) => x.type === 'Drifted' && x.status === 'True' && x.reason === 'NodePoolDrifted')) ? true : undefined;
    }, 60_000);

    let mostDeletingAtOnce = 0;
    let fewestReadyPods = 2;
    await eventually('both old claims replaced', async () => {
      const all = await claimsOf(drifting);
      mostDeletingAtOnce = Math.max(mostDeletingAtOnce, all.filter((c) => c.metadata.deletionTimestamp !== undefined).length);
      const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=api' })).items;
      fewestReadyPods = Math.min(fewestReadyPods, pods.filter((p) => p.status?.phase === 'Running').length);
      const old = all.filter((c) => before.some((b) => b.metadata.name === c.metadata.name));
      return old.length === 0 && all.length === 2 && all.every(initialized) ? all : undefined;
    }, 300_000);
    expect(mostDeletingAtOnce).toBeLessThanOrEqual(1);
    // a replacement was Initialized before its old node was drained: never both pods down
    expect(fewestReadyPods).toBeGreaterThanOrEqual(1);
    const after = await claimsOf(drifting);
    for (const c of after) expect(c.metadata.labels?.['example.com/rev']).toBe('2');
    await eventually('both pods Running on the new nodes', async () => {
      const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=api' })).items;
      const nodes = new Set(after.map((c) => c.status?.nodeName));
      return pods.length === 2 && pods.every((p) => p.status?.phase === 'Running' && nodes.has(p.spec?.nodeName)) ? true : undefined;
    }, 120_000);
    const status = await disruption.query<DisruptionStatus>('status');
    expect(status.lastCommand).toEqual(expect.objectContaining({ outcome: 'done', command: expect.objectContaining({ method: 'drift', reason: 'Drifted', replace: true }) }));
    // a drift command with a replacement: plan it, taint, launch it, wait until it is Initialized, delete
    await recordDisruption('disruption-drift-replace', ['planReplacements', 'validateCommand', 'startCommand', 'createClaims', 'replacementsState', 'deleteCandidates', 'commandNodesLeft']);
  });

  it('an AMI change on the EC2NodeClass (as a release upgrade makes it) drifts its nodes, and each is replaced on the new AMI', async () => {
    const name = `ami-${lh.id}`;
    const classes = { group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses' } as const;
    const base = (await lh.guest.customObjects.getClusterCustomObject({ ...classes, name: lh.nodeClassName })) as { spec: Record<string, unknown> };
    await lh.guest.customObjects.createClusterCustomObject({ ...classes, body: { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name }, spec: base.spec } });
    try {
      await createPool(name, { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never', budgets: [{ nodes: '1' }] }, {}, { nodeClass: name });
      await deploy('rel', 1, name);
      const [first] = await eventually('one initialized node', async () => {
        const all = await claimsOf(name);
        return all.length === 1 && all.every(initialized) ? all : undefined;
      }, 240_000);
      const oldImage = first!.status?.imageID;
      expect(oldImage).toBe(lh.h.fixtures.imageId);
      // another x86_64 Linux AMI the EC2 API knows: the "release's" new node image
      const images = await lh.h.direct.send(new DescribeImagesCommand({ Filters: [{ Name: 'architecture', Values: ['x86_64'] }] }));
      const next = images.Images?.find((i) => i.ImageId !== oldImage && (i.Platform ?? '').toLowerCase() !== 'windows')?.ImageId;
      expect(next).toBeDefined();
      await startDisruption();
      await lh.guest.customObjects.patchClusterCustomObject({ ...classes, name, body: { spec: { amiSelectorTerms: [{ id: next }] } } }, mergePatch);

      await eventually('Drifted=True (AMIDrift) on the old claim', async () => {
        const claim = (await claimsOf(name)).find((c) => c.metadata.name === first!.metadata.name);
        return claim?.status?.conditions?.some((x) => x.type === 'Drifted' && x.status === 'True' && x.reason === 'AMIDrift') ? true : undefined;
      }, 90_000);
      const replaced = await eventually('the node replaced by one on the new AMI', async () => {
        const all = await claimsOf(name);
        return all.length === 1 && all[0]!.metadata.name !== first!.metadata.name && initialized(all[0]!) ? all[0] : undefined;
      }, 240_000);
      expect(replaced!.status?.imageID).toBe(next);
    } finally {
      // this class is not the harness's: its pods, pool and claims must go before the file ends
      await apps.deleteNamespacedDeployment({ namespace, name: 'rel' }).catch(() => undefined);
      await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name }).catch(() => undefined);
      for (const c of await claimsOf(name)) await lh.claims.delete(c.metadata.name);
      await eventually('the AMI test pool’s claims gone', async () => ((await claimsOf(name)).length === 0 ? true : undefined), 180_000).catch(() => undefined);
      await lh.guest.customObjects.deleteClusterCustomObject({ ...classes, name }).catch(() => undefined);
    }
  });

  it('an EC2NodeClass edit drifts its nodes: other security groups (SecurityGroupDrift), then new tags (NodeClassDrift); each node replaced', async () => {
    const name = `ncd-${lh.id}`;
    const classes = { group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses' } as const;
    const base = (await lh.guest.customObjects.getClusterCustomObject({ ...classes, name: lh.nodeClassName })) as { spec: Record<string, unknown> };
    await lh.guest.customObjects.createClusterCustomObject({ ...classes, body: { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name }, spec: base.spec } });
    const group = await lh.h.direct.send(new CreateSecurityGroupCommand({ GroupName: `ncd-${lh.id}`, Description: 'the class moves to this group', VpcId: lh.h.fixtures.vpcId }));
    const groupsOf = async (providerId: string) => {
      const id = providerId.split('/').pop()!;
      const out = await lh.h.direct.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
      return (out.Reservations?.[0]?.Instances?.[0]?.SecurityGroups ?? []).map((g) => g.GroupId).sort();
    };
    const driftedBy = async (claimName: string, reason: string) =>
      eventually(`Drifted=True (${reason}) on ${claimName}`, async () => {
        const claim = (await claimsOf(name)).find((c) => c.metadata.name === claimName);
        return claim?.status?.conditions?.some((x) => x.type === 'Drifted' && x.status === 'True' && x.reason === reason) ? true : undefined;
      }, 120_000);
    const replacedFor = async (old: string) =>
      eventually(`${old} replaced`, async () => {
        const all = await claimsOf(name);
        const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=ncd' })).items;
        return all.length === 1 && all[0]!.metadata.name !== old && initialized(all[0]!) && pods.length === 1 && pods[0]!.status?.phase === 'Running' && pods[0]!.spec?.nodeName === all[0]!.status?.nodeName ? all[0]! : undefined;
      }, 240_000);
    try {
      await createPool(name, { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never', budgets: [{ nodes: '1' }] }, {}, { nodeClass: name });
      await deploy('ncd', 1, name);
      const [first] = await eventually('one initialized node', async () => {
        const all = await claimsOf(name);
        return all.length === 1 && all.every(initialized) ? all : undefined;
      }, 240_000);
      expect(first!.metadata.annotations?.['karpenter.k8s.aws/ec2nodeclass-hash']).toBeDefined();
      // EC2 gives a fleet's instance its launch template's groups; moto 5.2.5's CreateFleet
      // does not (none reported reads as unknown, not drift): set them as EC2 would have
      const firstId = first!.status!.providerID!.split('/').pop()!;
      await lh.h.direct.send(new ModifyInstanceAttributeCommand({ InstanceId: firstId, Groups: [lh.h.fixtures.securityGroupId] }));
      expect(await groupsOf(first!.status!.providerID!)).toEqual([lh.h.fixtures.securityGroupId]);
      await startDisruption();

      // the class now selects another group: the running instance is in the old one
      await lh.guest.customObjects.patchClusterCustomObject({ ...classes, name, body: { spec: { securityGroupSelectorTerms: [{ id: group.GroupId }] } } }, mergePatch);
      await driftedBy(first!.metadata.name, 'SecurityGroupDrift');
      const second = await replacedFor(first!.metadata.name);
      // the replacement launched from a template carrying the class's new group
      // filtered by the class's tag: unfiltered, moto answers the first 15 templates of every
      // file so far, and no NextToken (this file run late found none of its own)
      const templates = (await lh.h.direct.send(new DescribeLaunchTemplatesCommand({ Filters: [{ Name: 'tag:karpenter.k8s.aws/ec2nodeclass', Values: [name] }] }))).LaunchTemplates ?? [];
      const ofClass = templates.filter((t) => t.Tags?.some((tag) => tag.Key === 'karpenter.k8s.aws/ec2nodeclass' && tag.Value === name));
      expect(ofClass.length).toBeGreaterThan(0);
      const groupsInTemplates = await Promise.all(
        ofClass.map(async (t) => (await lh.h.direct.send(new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: t.LaunchTemplateId, Versions: ['$Latest'] }))).LaunchTemplateVersions?.[0]?.LaunchTemplateData?.SecurityGroupIds ?? []),
      );
      expect(groupsInTemplates).toContainEqual([group.GroupId]);

      // a static field of the class (as a release's new ignition would): the node class hash moves
      await lh.guest.customObjects.patchClusterCustomObject({ ...classes, name, body: { spec: { tags: { release: 'next' } } } }, mergePatch);
      await driftedBy(second.metadata.name, 'NodeClassDrift');
      const third = await replacedFor(second.metadata.name);
      expect(third.metadata.annotations?.['karpenter.k8s.aws/ec2nodeclass-hash']).not.toBe(second.metadata.annotations?.['karpenter.k8s.aws/ec2nodeclass-hash']);
    } finally {
      await apps.deleteNamespacedDeployment({ namespace, name: 'ncd' }).catch(() => undefined);
      await lh.guest.customObjects.deleteClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name }).catch(() => undefined);
      for (const c of await claimsOf(name)) await lh.claims.delete(c.metadata.name);
      await eventually('the class-drift pool’s claims gone', async () => ((await claimsOf(name)).length === 0 ? true : undefined), 180_000).catch(() => undefined);
      await lh.guest.customObjects.deleteClusterCustomObject({ ...classes, name }).catch(() => undefined);
      await lh.h.direct.send(new DeleteSecurityGroupCommand({ GroupId: group.GroupId })).catch(() => undefined);
    }
  });

  it('an underused node whose pods fit on the others is consolidated away (delete)', async () => {
    const name = `frag-${lh.id}`;
    // m5.xlarge: two 1500m pods per 4-vCPU node
    await createPool(name, { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '5s', budgets: [{ nodes: '1' }] }, {}, { types: ['m5.xlarge'] });
    await deploy('frag', 4, name);
    const two = await eventually('two full nodes', async () => {
      const all = await claimsOf(name);
      const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=frag' })).items;
      return all.length === 2 && all.every(initialized) && pods.filter((p) => p.status?.phase === 'Running').length === 4 ? { all, pods } : undefined;
    }, 240_000);
    // keep one pod on each node (the ReplicaSet removes the cheapest to delete first): two half-empty nodes
    const keep = [...new Map(two.pods.map((p) => [p.spec!.nodeName!, p])).values()];
    expect(keep).toHaveLength(2);
    for (const p of keep) await lh.guest.core.patchNamespacedPod({ namespace, name: p.metadata!.name!, body: { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '1000' } } } }, mergePatch);
    await apps.patchNamespacedDeploymentScale({ namespace, name: 'frag', body: { spec: { replicas: 2 } } }, mergePatch);
    const disruption = await startDisruption();

    const one = await eventually('one node left, running both pods', async () => {
      const all = await claimsOf(name);
      const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=frag' })).items;
      return all.length === 1 && pods.length === 2 && pods.every((p) => p.status?.phase === 'Running' && p.spec?.nodeName === all[0]!.status?.nodeName) ? all : undefined;
    }, 240_000);
    expect(two.all.map((c) => c.metadata.name)).toContain(one[0]!.metadata.name);
    const status = await eventually('the command recorded', async () => {
      const s = await disruption.query<DisruptionStatus>('status');
      return s.lastCommand?.command.method === 'consolidation' ? s : undefined;
    }, 30_000);
    expect(status.lastCommand).toEqual(expect.objectContaining({ outcome: 'done', command: expect.objectContaining({ method: 'consolidation', reason: 'Underutilized', replace: false, summary: expect.stringContaining('fit elsewhere') }) }));
    await recordDisruption('disruption-consolidation-delete', ['simulateConsolidation', 'startCommand', 'deleteCandidates']);
  });

  it('many-to-many: four one-pod nodes re-packed into two cheaper ones in one command (Karpenter stops at three into one)', async () => {
    // the last test's node goes first (empty), so only this pool's nodes are candidates
    await apps.patchNamespacedDeploymentScale({ namespace, name: 'frag', body: { spec: { replicas: 0 } } }, mergePatch).catch(() => undefined);
    await eventually('the frag pool empty', async () => ((await claimsOf(`frag-${lh.id}`)).length === 0 ? true : undefined), 180_000);
    const name = `m2m-${lh.id}`;
    // with the harness's kubelet reservations m5.large has 1500m allocatable, m5.xlarge 3500m: one 1000m pod
    // per m5.large, three per m5.xlarge — four pods cost 4 × m5.large one by one, m5.xlarge + m5.large packed
    await createPool(name, { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: 'Never', budgets: [{ nodes: '100%' }] }, {}, { types: ['m5.large', 'm5.xlarge'] });
    await deploy('m2m', 1, name, '1000m');
    for (let replicas = 1; replicas <= 4; replicas++) {
      if (replicas > 1) await apps.patchNamespacedDeploymentScale({ namespace, name: 'm2m', body: { spec: { replicas } } }, mergePatch);
      await eventually(`${replicas} pod(s) Running`, async () => {
        const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=m2m' })).items;
        return pods.filter((p) => p.status?.phase === 'Running').length === replicas ? true : undefined;
      }, 180_000);
    }
    const before = await claimsOf(name);
    expect(before.map((c) => c.metadata.labels?.['node.kubernetes.io/instance-type'])).toEqual(['m5.large', 'm5.large', 'm5.large', 'm5.large']);

    await lh.guest.customObjects.patchClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name, body: { spec: { disruption: { consolidateAfter: '5s' } } } }, mergePatch);
    const disruption = await startDisruption();
    await disruption.signal('disruptNow');
    const after = await eventually('two nodes left, running the four pods', async () => {
      const all = await claimsOf(name);
      const pods = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=m2m' })).items;
      const nodes = new Set(all.map((c) => c.status?.nodeName));
      return all.length === 2 && all.every(initialized) && pods.length === 4 && pods.every((p) => p.status?.phase === 'Running' && nodes.has(p.spec?.nodeName)) ? all : undefined;
    }, 300_000).catch(async (err: unknown) => {
      // say why: what the multi-node search tried
      console.log(`multi-node: ${JSON.stringify((await disruption.query<DisruptionStatus>('status')).lastMultiNode)}`);
      throw err;
    });
    expect(after.map((c) => c.metadata.labels?.['node.kubernetes.io/instance-type']).sort()).toEqual(['m5.large', 'm5.xlarge']);
    // the command ends once the candidates' nodes are gone, a little after the pods moved
    const status = await eventually('the command recorded', async () => {
      const s = await disruption.query<DisruptionStatus>('status');
      return s.lastCommand?.command.candidates.length === 4 ? s : undefined;
    }, 60_000);
    expect(status.lastCommand).toEqual(expect.objectContaining({ outcome: 'done', command: expect.objectContaining({ method: 'consolidation', replace: true, summary: expect.stringContaining('the pods of 4 nodes re-packed into 2 cheaper nodes') }) }));
    expect(status.lastCommand!.command.candidates.map((c) => c.nodeClaim).sort()).toEqual(before.map((c) => c.metadata.name).sort());
    // the re-pack's price against the LP bound for the same four pods: never below it
    const said = /new nodes \$([0-9.]+)\/h, LP bound \$([0-9.]+)\/h/.exec(status.lastCommand!.command.summary);
    expect(said).not.toBeNull();
    const [price, bound] = [Number(said![1]), Number(said![2])];
    expect(bound).toBeGreaterThan(0);
    expect(bound).toBeLessThanOrEqual(price);
    console.log(`many-to-many: ${status.lastCommand!.command.summary}`);
    // the multi-node simulation round and its many-to-many command
    await recordDisruption('disruption-many-to-many', ['simulateMultiNodeConsolidation', 'startCommand', 'createClaims', 'replacementsState', 'deleteCandidates']);
  });
});
