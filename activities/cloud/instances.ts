/**
 * Find, list and terminate this cluster's nodes. An instance that is shutting-down or
 * terminated counts as gone, and an instance without this cluster's tag is never ours:
 * both read as NotFound, so terminate can be called any number of times.
 */
import { DescribeInstancesCommand, TerminateInstancesCommand, type Filter } from '@aws-sdk/client-ec2';
import { type CloudInstance, type LiveInstanceState, LIVE_INSTANCE_STATES, TagKeys } from './domain';
import { type Ec2Instance, DescribeInstancesOutputSchema } from './ec2-schemas';
import { NotFoundError, isNotFoundError } from './errors';
import { formatProviderId, parseProviderId } from './provider-id';
import { call, type Ec2Context } from './context';

function isLiveState(state: string): state is LiveInstanceState {
  return LIVE_INSTANCE_STATES.some((live) => live === state);
}

/** undefined when the instance is shutting down or terminated. */
export function toCloudInstance(instance: Ec2Instance): CloudInstance | undefined {
  const state = instance.State.Name;
  if (!isLiveState(state)) return undefined;
  const ips = (instance.NetworkInterfaces ?? []).flatMap((ni) => (ni.PrivateIpAddresses ?? []).map((a) => a.PrivateIpAddress));
  const privateIpAddresses = [...new Set([instance.PrivateIpAddress, ...ips].filter((ip): ip is string => ip !== undefined && ip !== ''))];
  const zone = instance.Placement.AvailabilityZone;
  return {
    providerId: formatProviderId(zone, instance.InstanceId),
    instanceId: instance.InstanceId,
    instanceType: instance.InstanceType,
    zone,
    capacityType: instance.InstanceLifecycle === 'spot' ? 'spot' : 'on-demand',
    imageId: instance.ImageId,
    state,
    ...(instance.SubnetId ? { subnetId: instance.SubnetId } : {}),
    // an instance in a VPC always has a group: none reported (moto's CreateFleet) is unknown, not "no groups"
    ...(instance.SecurityGroups?.length ? { securityGroupIds: instance.SecurityGroups.map((g) => g.GroupId) } : {}),
    ...(instance.PrivateDnsName ? { privateDnsName: instance.PrivateDnsName } : {}),
    privateIpAddresses,
    launchTime: instance.LaunchTime.toISOString(),
    tags: instance.Tags,
  };
}

export async function describeInstances(
  ctx: Pick<Ec2Context, 'ec2' | 'retry'>,
  query: { instanceIds?: string[]; filters?: Filter[] },
): Promise<Ec2Instance[]> {
  const found: Ec2Instance[] = [];
  let nextToken: string | undefined;
  do {
    const token = nextToken;
    const page = DescribeInstancesOutputSchema.parse(
      await call(ctx, 'DescribeInstances', () =>
        ctx.ec2.send(
          new DescribeInstancesCommand({
            ...(query.instanceIds ? { InstanceIds: query.instanceIds } : {}),
            ...(query.filters ? { Filters: query.filters } : {}),
            ...(token ? { NextToken: token } : {}),
          }),
        ),
      ),
    );
    for (const reservation of page.Reservations ?? []) found.push(...(reservation.Instances ?? []));
    nextToken = page.NextToken;
  } while (nextToken);
  return found;
}

export function clusterFilters(ctx: Pick<Ec2Context, 'cluster'>): Filter[] {
  return [
    { Name: `tag:${TagKeys.cluster(ctx.cluster.name)}`, Values: ['owned'] },
    { Name: 'instance-state-name', Values: [...LIVE_INSTANCE_STATES] },
  ];
}

/** Tagged for this cluster and by the provisioner: never one of the cluster's other machines. */
export function isManagedByCluster(tags: Record<string, string>, clusterName: string): boolean {
  return tags[TagKeys.cluster(clusterName)] === 'owned' && TagKeys.nodePool in tags && TagKeys.nodeClaim in tags;
}

export async function getInstance(ctx: Ec2Context, providerId: string): Promise<CloudInstance> {
  return getInstanceById(ctx, parseProviderId(providerId).instanceId, providerId);
}

/** `resource` names the instance in errors: the provider id when the caller has one. */
export async function getInstanceById(ctx: Ec2Context, instanceId: string, resource = instanceId): Promise<CloudInstance> {
  const raw = await ctx.reads.byId(instanceId);
  if (raw === undefined) throw new NotFoundError(resource, 'absent', `instance ${instanceId} does not exist`);
  if (!isManagedByCluster(raw.Tags, ctx.cluster.name)) {
    throw new NotFoundError(resource, 'not-owned', `instance ${instanceId} is not a node of cluster ${ctx.cluster.name}`);
  }
  const instance = toCloudInstance(raw);
  if (instance === undefined) {
    throw new NotFoundError(resource, 'terminated', `instance ${instanceId} is ${raw.State.Name}`);
  }
  return instance;
}

/** The live instance launched for a NodeClaim, if any: the business key of launch. */
export async function findByNodeClaim(ctx: Ec2Context, nodeClaimName: string): Promise<CloudInstance | undefined> {
  const raw = await ctx.reads.byTag(nodeClaimName);
  const live = raw
    .filter((i) => isManagedByCluster(i.Tags, ctx.cluster.name))
    .map(toCloudInstance)
    .filter((i): i is CloudInstance => i !== undefined)
    // Two live instances for one claim would be a bug elsewhere; pick deterministically (oldest, then id).
    .sort((a, b) => a.launchTime.localeCompare(b.launchTime) || a.instanceId.localeCompare(b.instanceId));
  return live[0];
}

/** Every live node the provisioner launched for this cluster. */
export async function listInstances(ctx: Ec2Context): Promise<CloudInstance[]> {
  const raw = await describeInstances(ctx, {
    filters: [...clusterFilters(ctx), { Name: 'tag-key', Values: [TagKeys.nodeClaim] }],
  });
  return raw
    .filter((i) => isManagedByCluster(i.Tags, ctx.cluster.name))
    .map(toCloudInstance)
    .filter((i): i is CloudInstance => i !== undefined)
    .sort((a, b) => a.instanceId.localeCompare(b.instanceId));
}

export type TerminateOutcome =
  | { outcome: 'terminating'; providerId: string; previousState: LiveInstanceState }
  | { outcome: 'already-gone'; providerId: string; reason: 'absent' | 'terminated' | 'not-owned' };

export async function terminateInstance(ctx: Ec2Context, providerId: string): Promise<TerminateOutcome> {
  let instance: CloudInstance;
  try {
    instance = await getInstance(ctx, providerId);
  } catch (error) {
    if (isNotFoundError(error)) return { outcome: 'already-gone', providerId, reason: error.reason };
    throw error;
  }
  try {
    await call(ctx, 'TerminateInstances', () => ctx.ec2.send(new TerminateInstancesCommand({ InstanceIds: [instance.instanceId] })));
  } catch (error) {
    // Terminated between our describe and the call: the goal is reached.
    if (isNotFoundError(error)) return { outcome: 'already-gone', providerId, reason: 'absent' };
    throw error;
  }
  ctx.logger.info({ providerId, instanceType: instance.instanceType }, 'terminating instance');
  return { outcome: 'terminating', providerId, previousState: instance.state };
}
