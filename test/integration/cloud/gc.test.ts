import { DescribeInstancesCommand, RunInstancesCommand, type Tag } from '@aws-sdk/client-ec2';
import { startCloudHarness, type CloudHarness } from '../../support/cloud';
import { createEc2CloudProvider, formatProviderId, type NodeClaimExists } from '../../../activities/cloud';

let h: CloudHarness;
beforeAll(async () => {
  h = await startCloudHarness();
});
afterAll(async () => {
  await h?.close();
});

async function runInstance(tags: Record<string, string>): Promise<string> {
  const out = await h.direct.send(
    new RunInstancesCommand({
      ImageId: h.fixtures.imageId,
      InstanceType: 't3.small',
      MinCount: 1,
      MaxCount: 1,
      SubnetId: h.fixtures.subnetIds[0],
      ...(Object.keys(tags).length === 0
        ? {}
        : { TagSpecifications: [{ ResourceType: 'instance', Tags: Object.entries(tags).map(([Key, Value]): Tag => ({ Key, Value })) }] }),
    }),
  );
  const id = out.Instances?.[0]?.InstanceId;
  if (!id) throw new Error('moto started no instance');
  return id;
}

function karpenterTags(cluster: string, nodeClaim: string): Record<string, string> {
  return {
    [`kubernetes.io/cluster/${cluster}`]: 'owned',
    'karpenter.sh/nodepool': 'default',
    'karpenter.sh/nodeclaim': nodeClaim,
    'karpenter.k8s.aws/ec2nodeclass': 'default',
  };
}

describe('garbage collection of leaked instances', () => {
  it('terminates only instances whose NodeClaim is gone, never the cluster’s other machines or another cluster’s', async () => {
    const cluster = h.cluster.name;
    const leaked = await runInstance(karpenterTags(cluster, 'gone-1'));
    const live = await runInstance(karpenterTags(cluster, 'alive-1'));
    // HyperShift's own NodePool machine: same cluster tag, no provisioner tags.
    const hypershiftMachine = await runInstance({ [`kubernetes.io/cluster/${cluster}`]: 'owned', Name: 'hcp-nodepool-worker' });
    const untagged = await runInstance({});
    const foreign = await runInstance(karpenterTags('some-other-cluster', 'gone-1'));
    // Karpenter-looking but missing the node-class tag key: not provably ours.
    const partial = await runInstance({ [`kubernetes.io/cluster/${cluster}`]: 'owned', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'gone-2' });

    const asked: string[] = [];
    const nodeClaimExists: NodeClaimExists = async ({ nodeClaim }) => {
      asked.push(nodeClaim);
      return nodeClaim.startsWith('alive-');
    };

    // Right after launch everything is younger than 30 s: nothing is collected.
    const early = await h.provider.collectLeakedInstances(nodeClaimExists);
    expect(early.terminated).toEqual([]);
    expect(early.skipped).toEqual(expect.arrayContaining([{ instanceId: leaked, reason: 'too-young' }]));

    // A minute later (the provider's clock moves; moto's launch times stay).
    const later = createEc2CloudProvider({
      ec2: h.direct,
      cluster: h.cluster,
      clock: { now: () => new Date(Date.now() + 60_000), sleep: async () => {} },
    });
    const result = await later.collectLeakedInstances(nodeClaimExists);

    expect(result.terminated.map((t) => t.instanceId)).toEqual([leaked]);
    expect(result.terminated[0]).toMatchObject({ nodeClaim: 'gone-1', nodePool: 'default', providerId: formatProviderId('us-east-1a', leaked) });
    expect(result.kept.map((k) => k.instanceId)).toEqual([live]);
    expect(asked.sort()).toEqual(['alive-1', 'gone-1']);

    const states = await h.provider.list();
    expect(states.map((i) => i.instanceId)).toEqual(expect.arrayContaining([live]));
    expect(states.map((i) => i.instanceId)).not.toContain(leaked);
    for (const untouched of [hypershiftMachine, untagged, foreign, partial, live]) {
      expect(await stateOf(untouched)).toBe('running');
    }
    expect(await stateOf(leaked)).toMatch(/shutting-down|terminated/);

    // A second pass finds nothing more to do.
    const again = await later.collectLeakedInstances(nodeClaimExists);
    expect(again.terminated).toEqual([]);
  });
});

async function stateOf(instanceId: string): Promise<string | undefined> {
  const out = await h.direct.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
  return out.Reservations?.[0]?.Instances?.[0]?.State?.Name;
}
