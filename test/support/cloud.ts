/**
 * Integration harness for the EC2 cloud provider: moto from the local stack, the fault
 * proxy in front of it, and per-test-file fixtures (a VPC with tagged subnets in three
 * zones, a tagged security group, a tagged x86_64 AMI, and an untagged arm64 AMI for tests
 * that select it by id) under a unique cluster name, so test files sharing one moto never
 * see each other's machines.
 */
import { randomUUID } from 'node:crypto';
import { DescribeImagesCommand, DescribeInstancesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { createClusterNetwork } from '../../dev/autonode/ec2-fixtures';
import { loadStackInfo } from './stack';
import { startEc2FaultProxy, type Ec2FaultProxy } from './ec2-fault-proxy';
import { uniqueNetworkOctet } from './network';
import {
  createEc2ClientFactory,
  createEc2CloudProvider,
  endpointPolicyFromEnv,
  staticCredentialsProvider,
  type CloudClusterRef,
  type CloudProvider,
  type RetryEvent,
} from '../../activities/cloud';
import { type LaunchRequest } from '../../activities/cloud/launch';
import { type NodeClassInput } from '../../activities/cloud/node-class-input';
import { type Offering } from '../../activities/cloud/overrides';

export const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'] as const;

export interface CloudHarness {
  cluster: CloudClusterRef;
  proxy: Ec2FaultProxy;
  provider: CloudProvider;
  /** the same cluster's provider as another worker process holds it: nothing kept in memory is shared */
  otherWorker: CloudProvider;
  /** straight to moto, for fixtures and for checking what really exists */
  direct: EC2Client;
  retries: RetryEvent[];
  fixtures: {
    vpcId: string;
    subnetIds: string[];
    securityGroupId: string;
    /** x86_64, carries the discovery tag */
    imageId: string;
    /** arm64, untagged: node classes that want it name it by id */
    arm64ImageId: string;
    discoveryTag: Record<string, string>;
  };
  close(): Promise<void>;
}

export async function startCloudHarness(): Promise<CloudHarness> {
  const stack = loadStackInfo();
  const cluster: CloudClusterRef = { name: `it-${randomUUID().slice(0, 8)}`, region: stack.ec2.region };
  const clientFor = createEc2ClientFactory({
    endpoint: stack.ec2.endpoint,
    credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
    endpointPolicy: endpointPolicyFromEnv(process.env),
  });
  const direct = clientFor(cluster);
  const proxy = await startEc2FaultProxy({ target: stack.ec2.endpoint });
  const viaProxy = createEc2ClientFactory({
    endpoint: proxy.endpoint,
    credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
    endpointPolicy: endpointPolicyFromEnv(process.env),
  })(cluster);
  const retries: RetryEvent[] = [];
  const provider = createEc2CloudProvider({
    ec2: viaProxy,
    cluster,
    retryPolicy: { maxAttempts: 5, baseDelayMs: 20, maxDelayMs: 200 },
    onRetry: (event) => retries.push(event),
  });
  const otherWorker = createEc2CloudProvider({ ec2: viaProxy, cluster, retryPolicy: { maxAttempts: 5, baseDelayMs: 20, maxDelayMs: 200 } });
  const fixtures = await createFixtures(direct, cluster.name);
  return {
    cluster,
    proxy,
    provider,
    otherWorker,
    direct,
    retries,
    fixtures,
    close: async () => {
      await proxy.close();
      direct.destroy();
      viaProxy.destroy();
    },
  };
}

async function createFixtures(ec2: EC2Client, clusterName: string): Promise<CloudHarness['fixtures']> {
  // A /16 of its own per test file: files share one moto and one guest, and equal addresses mean equal node names.
  const network = await createClusterNetwork(ec2, { clusterName, zones: ZONES, octet: uniqueNetworkOctet() });
  return { ...network, arm64ImageId: await anArm64Image(ec2) };
}

/** One of the arm64 Linux AMIs moto ships, the same one every time (lowest id). */
async function anArm64Image(ec2: EC2Client): Promise<string> {
  const images = await ec2.send(new DescribeImagesCommand({ Owners: ['amazon'], Filters: [{ Name: 'architecture', Values: ['arm64'] }] }));
  const ids = (images.Images ?? [])
    .filter((i) => (i.Platform ?? '').toLowerCase() !== 'windows')
    .flatMap((i) => (i.ImageId ? [i.ImageId] : []))
    .sort();
  const id = ids[0];
  if (!id) throw new Error('the EC2 API has no arm64 AMI');
  return id;
}

/** A node class selecting this harness's fixtures by the discovery tag. */
export function aNodeClass(h: CloudHarness, overrides: Partial<NodeClassInput['spec']> = {}): NodeClassInput {
  return {
    name: 'default',
    spec: {
      subnetSelectorTerms: [{ tags: h.fixtures.discoveryTag }],
      securityGroupSelectorTerms: [{ tags: h.fixtures.discoveryTag }],
      amiSelectorTerms: [{ tags: h.fixtures.discoveryTag }],
      amiFamily: 'Custom',
      userData: '#!/bin/bash\necho "join the hosted cluster"\n',
      tags: { team: 'autonode' },
      ...overrides,
    },
  };
}

export function offerings(spec: { zones?: readonly string[]; spot?: number; onDemand?: number }): Offering[] {
  const zones = spec.zones ?? ZONES;
  return zones.flatMap((zone) => [
    ...(spec.spot !== undefined ? [{ zone, capacityType: 'spot' as const, price: spec.spot, available: true }] : []),
    ...(spec.onDemand !== undefined ? [{ zone, capacityType: 'on-demand' as const, price: spec.onDemand, available: true }] : []),
  ]);
}

/** A launch request for a fresh NodeClaim over the harness's resolved node class. */
export async function aLaunchRequest(h: CloudHarness, overrides: Partial<LaunchRequest> = {}): Promise<LaunchRequest> {
  const resolved = await h.provider.resolveNodeClass(aNodeClass(h));
  if (!resolved.ready) throw new Error(`fixture node class not ready: ${JSON.stringify(resolved.conditions)}`);
  const name = `default-${randomUUID().slice(0, 5)}`;
  return {
    nodeClaim: { name, uid: randomUUID() },
    nodePool: 'default',
    nodeClass: {
      name: 'default',
      tags: { team: 'autonode' },
      securityGroupIds: resolved.securityGroups.map((g) => g.id),
      subnets: resolved.subnets,
      userData: resolved.userData ?? '',
      amiFamily: 'Custom',
    },
    images: { amd64: h.fixtures.imageId },
    instanceTypes: [
      { instanceType: 'm5.large', architecture: 'amd64', offerings: offerings({ spot: 0.04, onDemand: 0.096 }) },
      { instanceType: 'm5.xlarge', architecture: 'amd64', offerings: offerings({ spot: 0.08, onDemand: 0.192 }) },
    ],
    capacityTypes: ['spot', 'on-demand'],
    ...overrides,
  };
}

/** Live instances moto holds for a NodeClaim, read directly (not through the provider). */
export async function liveInstancesOf(h: CloudHarness, nodeClaim: string): Promise<string[]> {
  const out = await h.direct.send(
    new DescribeInstancesCommand({
      Filters: [
        { Name: 'tag:karpenter.sh/nodeclaim', Values: [nodeClaim] },
        { Name: `tag:kubernetes.io/cluster/${h.cluster.name}`, Values: ['owned'] },
        { Name: 'instance-state-name', Values: ['pending', 'running'] },
      ],
    }),
  );
  return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).flatMap((i) => (i.InstanceId ? [i.InstanceId] : []));
}
