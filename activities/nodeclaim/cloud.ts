import { Context } from '@temporalio/activity';
import { beating } from '../heartbeat';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { EXPECTED_NODE_NAME_ANNOTATION, launchOptionsForClaim, type ClusterRef, type LaunchOption, type LaunchOutcome, type LaunchedInstance } from '../../core/lifecycle';
import {
  ArchitectureSchema,
  EC2_ARCHITECTURE,
  NodeClassInputSchema,
  imagesByArchitecture,
  isInsufficientCapacityError,
  withCloudFailures,
  type Architecture,
  type CloudInstance,
  type InstanceTypeOption,
  type SubnetChoice,
} from '../cloud';
import { formatIssue, normaliseDocument, type EC2NodeClass } from '../../core/api';
import { assertNever } from '../../core/assert';
import { INSTANCE_NETWORK_ANNOTATION, NODECLASS_HASH_ANNOTATION, NODECLASS_HASH_VERSION, NODECLASS_HASH_VERSION_ANNOTATION, instanceNetworkValue, nodeClassHash } from '../../core/disruption/drift';
import { type InstanceType } from '../../core/instancetypes';
import { heldOfferingsOf } from '../../core/provisioning/nodeclaims';
import { catalogQueryFor } from '../../core/workloads/assemble';
import { LabelKey } from '../../core/scheduling';
import { type ClusterResolver } from '../cluster';
import { failWith } from '../failures';
import { someNames } from './names';
import { isNotFound } from '../kube/errors';
import { createEventRecorder } from '../kube/events';
import { NodeClaimStore } from '../kube/nodeclaims';
import { recordNodeClassResolution } from '../kube/nodeclasses';
import { RESOLUTION_MAX_STALE_MS, ResolutionCache } from '../cloud/resolution-cache';
import { NODEPOOL_LABEL } from '../kube/nodes';
import { nodeClaimRef, type ClaimRef } from './kube';
import { type AutonodeMetrics } from '../metrics';
import { activityLog } from '../log';

export interface NodeClaimCloudDeps {
  resolve: ClusterResolver;
  now?: () => Date;
  /** where launched instances are counted */
  metrics?: AutonodeMetrics;
}


function launched(instance: CloudInstance): LaunchedInstance {
  if (!instance.privateDnsName) {
    // A kubelet registers under its private DNS name; without one nothing can be approved.
    throw failWith.retryable('InstanceNotReady', `instance ${instance.instanceId} has no private DNS name yet`);
  }
  return {
    providerId: instance.providerId,
    instanceId: instance.instanceId,
    instanceType: instance.instanceType,
    zone: instance.zone,
    capacityType: instance.capacityType,
    imageId: instance.imageId,
    privateDnsName: instance.privateDnsName,
    privateIpAddresses: instance.privateIpAddresses,
    launchTime: instance.launchTime,
  };
}

/** spec.nodeClassRef must name an EC2NodeClass; undefined when it does. */
function unsupportedNodeClassRef(ref: { group?: string | undefined; kind?: string | undefined; name: string }): string | undefined {
  const group = ref.group ?? 'karpenter.k8s.aws';
  const kind = ref.kind ?? 'EC2NodeClass';
  if (group === 'karpenter.k8s.aws' && kind === 'EC2NodeClass') return undefined;
  return `spec.nodeClassRef names ${kind}.${group} ${ref.name}; autonode launches only from karpenter.k8s.aws EC2NodeClass objects (set nodeClassRef.group: karpenter.k8s.aws, kind: EC2NodeClass)`;
}

/**
 * The claim's launch options with their architecture (the `kubernetes.io/arch` label EC2's
 * instance types carry). A type without a label we launch for has no image either way.
 */
function withArchitectures(options: readonly LaunchOption[], instanceTypes: readonly InstanceType[]): InstanceTypeOption[] {
  const architectureOf = new Map(instanceTypes.map((t) => [t.name, ArchitectureSchema.safeParse(t.labels[LabelKey.arch])]));
  return options.flatMap((o) => {
    const architecture = architectureOf.get(o.instanceType);
    return architecture?.success ? [{ ...o, architecture: architecture.data }] : [];
  });
}

/** "amd64 (x86_64)": an AMI's Architecture field uses EC2's name. */
const describeArchitecture = (architecture: Architecture) =>
  EC2_ARCHITECTURE[architecture] === architecture ? architecture : `${architecture} (${EC2_ARCHITECTURE[architecture]})`;

/** The stored class through core/api's normalisation (autonode's own rules beyond the CRD schema), or what is wrong with it. */
function normalisedNodeClass(raw: unknown): { nodeClass: EC2NodeClass } | { problem: string } {
  const normalised = normaliseDocument(raw);
  switch (normalised.status) {
    case 'ok': {
      const nodeClass = normalised.objects.find((o): o is EC2NodeClass => o.kind === 'EC2NodeClass');
      return nodeClass ? { nodeClass } : { problem: 'not an EC2NodeClass' };
    }
    case 'invalid':
      return { problem: normalised.issues.map(formatIssue).join('; ') };
    case 'unsupported':
      return { problem: normalised.reason };
    case 'other':
      return { problem: 'not an EC2NodeClass' };
    default:
      return assertNever(normalised);
  }
}

const StoredNodeClassSchema = z.object({ metadata: z.object({ name: z.string() }), spec: z.record(z.string(), z.unknown()) });

/**
 * The NodeClaim lifecycle's cloud activities (task queue `autonode-cloud`, rate-limited):
 * each takes one object and is idempotent by the NodeClaim's name and the instance's tags.
 */
export function createNodeClaimCloudActivities(deps: NodeClaimCloudDeps) {
  const now = deps.now ?? (() => new Date());
  // the claims of one batch launch together: they share one lookup of their class
  const resolutions = new ResolutionCache(10_000, Date.now, RESOLUTION_MAX_STALE_MS);
  const connect = async (cluster: ClusterRef) => {
    const c = await deps.resolve(cluster);
    return { ...c, claims: new NodeClaimStore(c.guest), event: createEventRecorder(c.guest.core) };
  };
  const mustGet = async (claims: NodeClaimStore, name: string) => {
    const claim = await claims.get(name);
    if (!claim) throw failWith.permanent('NodeClaimGone', `NodeClaim ${name} no longer exists`);
    return claim;
  };

  /**
   * Launches (or finds) the claim's instance and records it on the NodeClaim (see
   * launchClaimInstance below); `signal` aborts it before CreateFleet once it is unwanted.
   */
  async function launchClaimInstance({ cluster, name }: ClaimRef, signal?: AbortSignal): Promise<LaunchOutcome> {
    const { claims, cloud, guest, event } = await connect(cluster);
    const claim = await mustGet(claims, name);
    const ref = claim.spec.nodeClassRef;
    const unsupported = unsupportedNodeClassRef(ref);
    if (unsupported) {
      // Launching with some other class than the one named would be a guess: end the claim
      // (its Warning Event says why) instead.
      await claims.patchStatus(claim, { conditions: [{ type: 'Launched', status: 'False', reason: 'UnsupportedNodeClass', message: unsupported }] }, now().toISOString());
      throw failWith.permanent('Invalid', unsupported);
    }
    const nodeClassName = ref.name;
    /**
     * The class is missing or not ready: a condition, a Warning Event (counted, not
     * repeated), and a retry — unless the claim is being deleted, which ends the launch so
     * `kubectl delete` never waits on a class that may never come.
     */
    const nodeClassNotReady = async (reason: string, message: string): Promise<never> => {
      await claims.patchStatus(claim, { conditions: [{ type: 'NodeClassReady', status: 'False', reason, message }, { type: 'Launched', status: 'False', reason: 'NodeClassNotReady', message }] }, now().toISOString());
      await event({ involvedObject: nodeClaimRef(claim), type: 'Warning', reason: 'NodeClassNotReady', message });
      if (claim.metadata.deletionTimestamp) throw failWith.permanent('NodeClaimGone', `NodeClaim ${name} is being deleted; not launching`);
      throw failWith.retryable('NodeClassNotReady', message);
    };
    let rawClass: unknown;
    try {
      rawClass = await guest.customObjects.getClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: nodeClassName });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return await nodeClassNotReady('NodeClassNotFound', `EC2NodeClass ${nodeClassName} (spec.nodeClassRef.name) does not exist; create it, or point the NodeClaim's NodePool at one that does`);
    }
    const stored = StoredNodeClassSchema.parse(rawClass);
    const nodeClass = NodeClassInputSchema.parse({ name: stored.metadata.name, spec: stored.spec });
    const resolution = await withCloudFailures(() => resolutions.resolve(cluster.name, cloud, nodeClass));
    if (!resolution.ready) {
      const why = resolution.conditions.filter((c) => c.status !== 'True').map((c) => `${c.type}: ${c.message}`).join('; ');
      return await nodeClassNotReady('NodeClassNotReady', `EC2NodeClass ${nodeClassName} is not ready: ${why}`);
    }
    // The class as the provisioner reads it (core/api, v1 defaults applied): its AMI
    // family, kubelet and volumes decide both the allocatable recorded on the claim and
    // what the launch template carries, so the two cannot disagree.
    const model = normalisedNodeClass(rawClass);
    if ('problem' in model) return await nodeClassNotReady('InvalidEC2NodeClass', `EC2NodeClass ${nodeClassName} is invalid: ${model.problem}`);
    const query = catalogQueryFor(nodeClassName, model.nodeClass);
    if ('unsupported' in query) return await nodeClassNotReady('UnsupportedAMIFamily', `EC2NodeClass ${nodeClassName}: amiFamily ${query.unsupported} is not supported`);
    // The region's instance types and offerings as EC2 reports them (cached per cluster),
    // restricted to the zones this node class has subnets in, with the allocatable its
    // AMI family, kubelet settings and root volume leave (as the provisioner planned).
    const { kubelet } = query;
    const instanceTypes = await withCloudFailures(() =>
      cloud.instanceTypes({
        amiFamily: query.amiFamily,
        ...(kubelet ? { kubelet } : {}),
        ...(query.rootVolumeSize ? { rootVolumeSize: query.rootVolumeSize } : {}),
        zones: [...new Set(resolution.subnets.map((s) => s.zone))].sort(),
      }),
    );
    const limits = {
      ...(claim.spec.resources?.requests ? { requests: claim.spec.resources.requests } : {}),
      ...(claim.metadata.labels ? { stampedLabels: claim.metadata.labels } : {}),
    };
    // The offerings planning held unavailable (an insufficient-capacity error, an interrupted
    // spot pool) stay out of the overrides while their TTL runs, as Karpenter's launch filters
    // its cache; when they are all the claim has, EC2 decides (the memory is advice).
    const held = heldOfferingsOf(claim, now().getTime());
    const filtered = held.size > 0 ? launchOptionsForClaim(claim.spec.requirements, instanceTypes, { ...limits, unavailable: held }) : undefined;
    const options = filtered?.ok ? filtered : launchOptionsForClaim(claim.spec.requirements, instanceTypes, limits);
    if (!options.ok) {
      await claims.patchStatus(claim, { conditions: [{ type: 'Launched', status: 'False', reason: 'InstanceTypesUnsatisfiable', message: options.reason }] }, now().toISOString());
      throw failWith.permanent('Invalid', options.reason);
    }
    // An AMI per architecture the claim's types span: the fleet may pick any of them, and
    // each boots the image of its own architecture. Types without one are left out.
    const launchOptions = withArchitectures(options.options, instanceTypes);
    const architectures = [...new Set(launchOptions.map((o) => o.architecture))].sort();
    const images = imagesByArchitecture(resolution.amis, architectures);
    if (!launchOptions.some((o) => images[o.architecture] !== undefined)) {
      const wanted = architectures.length > 0 ? architectures.map(describeArchitecture).join(' or ') : 'their architecture';
      return await nodeClassNotReady(
        'AMINotFound',
        `EC2NodeClass ${nodeClassName} resolved no AMI for ${wanted}, which the instance types NodeClaim ${name} allows need (${someNames(options.options.map((o) => o.instanceType))}); add an amiSelectorTerm that matches one, or allow instance types of an architecture the class has an AMI for`,
      );
    }
    // On a HostedCluster (the guest reached through its kubeconfig Secret) autonode's
    // enablement writes the cluster's userData into every EC2NodeClass; a class without it was
    // just (re)applied and is written again within seconds. An instance launched meanwhile
    // could never join (and would wait out the registration timeout): the launch waits instead.
    if (cluster.kubeconfigSecret !== undefined && !resolution.userData) {
      return await nodeClassNotReady(
        'UserDataMissing',
        `EC2NodeClass ${nodeClassName} has no userData yet: on a HostedCluster autonode writes the cluster's userData into every EC2NodeClass (within seconds of a change); NodeClaim ${name} launches once it is there`,
      );
    }
    const subnets: SubnetChoice[] = resolution.subnets.map((s) => ({ id: s.id, zone: s.zone, availableIpCount: s.availableIpCount }));

    let result;
    try {
      result = await withCloudFailures(() =>
        cloud.launch({
          nodeClaim: { name: claim.metadata.name, uid: claim.metadata.uid },
          nodePool: claim.metadata.labels?.[NODEPOOL_LABEL] ?? '',
          nodeClass: {
            name: nodeClassName,
            tags: nodeClass.spec.tags ?? {},
            securityGroupIds: resolution.securityGroups.map((g) => g.id),
            subnets,
            userData: resolution.userData ?? '',
            ...(nodeClass.spec.instanceProfile ? { instanceProfile: nodeClass.spec.instanceProfile } : {}),
            amiFamily: query.amiFamily,
            ...(model.nodeClass.spec.blockDeviceMappings ? { blockDeviceMappings: model.nodeClass.spec.blockDeviceMappings } : {}),
            metadataOptions: model.nodeClass.spec.metadataOptions,
            ...(model.nodeClass.spec.detailedMonitoring !== undefined ? { detailedMonitoring: model.nodeClass.spec.detailedMonitoring } : {}),
            ...(model.nodeClass.spec.associatePublicIPAddress !== undefined ? { associatePublicIPAddress: model.nodeClass.spec.associatePublicIPAddress } : {}),
            ...(kubelet ? { kubelet } : {}),
          },
          images,
          instanceTypes: launchOptions,
          capacityTypes: options.capacityTypes,
          zones: options.zones,
          ...(signal ? { signal } : {}),
        }),
      );
    } catch (err) {
      const cause = err instanceof ApplicationFailure ? err.cause : err;
      if (isInsufficientCapacityError(cause)) {
        await claims.patchStatus(claim, { conditions: [{ type: 'Launched', status: 'False', reason: 'InsufficientCapacity', message: cause.message }] }, now().toISOString());
      }
      throw err;
    }
    if (!result.reused) {
      // Counted as soon as EC2 returned a new instance, whatever happens to the rest of this
      // attempt: a retry finds the instance by its NodeClaim tag (reused) and does not count it.
      const { instanceType, capacityType, zone, instanceId } = result.instance;
      const nodepool = claim.metadata.labels?.[NODEPOOL_LABEL] ?? '';
      deps.metrics?.nodeClaimsLaunched.inc({ cluster: cluster.name, nodepool, instance_type: instanceType, capacity_type: capacityType, zone });
      activityLog('info', 'instance launched', { cluster: cluster.name, nodeclaim: name, nodepool, instanceId, instanceType, capacityType, zone });
    }
    const instance = launched(result.instance);
    const type = instanceTypes.find((t) => t.name === instance.instanceType);
    // The claim as it is now: the launch may have taken minutes (throttled calls, a loaded
    // worker), and writing with the resourceVersion read before it would fail on any change
    // made meanwhile — and a failed attempt is retried from the start.
    const current = await mustGet(claims, name);
    // the class's static hash as launched: a later edit of it drifts this node (NodeClassDrift)
    // and where the instance is (subnet, security groups): subnet and group drift read it
    const network = instanceNetworkValue(result.instance);
    let updated = await claims.annotate(current, {
      [EXPECTED_NODE_NAME_ANNOTATION]: instance.privateDnsName,
      [NODECLASS_HASH_ANNOTATION]: nodeClassHash(model.nodeClass),
      [NODECLASS_HASH_VERSION_ANNOTATION]: NODECLASS_HASH_VERSION,
      ...(network !== undefined ? { [INSTANCE_NETWORK_ANNOTATION]: network } : {}),
    });
    // as Karpenter stamps a launched claim: the type's labels (arch, os, category, family,
    // generation, size, cpu, memory, …), then the offering's zone and capacity type
    updated = await claims.patchLabels(updated, {
      ...(type ? type.labels : {}),
      'node.kubernetes.io/instance-type': instance.instanceType,
      'topology.kubernetes.io/zone': instance.zone,
      'karpenter.sh/capacity-type': instance.capacityType,
    });
    await claims.patchStatus(
      updated,
      {
        providerID: instance.providerId,
        imageID: instance.imageId,
        ...(type ? { capacity: { ...type.capacity }, allocatable: { ...type.allocatable } } : {}),
        conditions: [
          { type: 'NodeClassReady', status: 'True', reason: 'NodeClassReady', message: '' },
          { type: 'Launched', status: 'True', reason: 'Launched', message: `${instance.instanceType} ${instance.capacityType} in ${instance.zone} (${instance.instanceId})` },
        ],
      },
      now().toISOString(),
    );
    if (!result.reused) {
      await event({ involvedObject: nodeClaimRef(claim), type: 'Normal', reason: 'Launched', message: `Launched ${instance.instanceId} (${instance.instanceType}, ${instance.capacityType}, ${instance.zone})` });
    }
    // Compact (no reason, no field when empty): this result is kept in workflow history.
    const exhaustedOfferings = result.exhaustedOfferings.map(({ instanceType, zone, capacityType }) => ({ instanceType, zone, capacityType }));
    return exhaustedOfferings.length > 0 ? { ...instance, exhaustedOfferings } : instance;
  }

  return {
    /**
     * The EC2NodeClass status controller's step: resolves the claim's node class (subnets,
     * security groups, AMIs) and writes what it found onto the class's status, so
     * `kubectl get ec2nodeclass -o yaml` explains a launch that cannot happen. Never fails
     * for a class that is missing or not ready: the launch that follows says so on the claim.
     */
    async reconcileNodeClass({ cluster, name }: ClaimRef): Promise<{ nodeClass?: string; ready: boolean; message?: string }> {
      const { claims, cloud, guest } = await connect(cluster);
      const claim = await mustGet(claims, name);
      const ref = claim.spec.nodeClassRef;
      if (unsupportedNodeClassRef(ref)) return { ready: false, message: unsupportedNodeClassRef(ref) };
      let rawClass: unknown;
      try {
        rawClass = await guest.customObjects.getClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', name: ref.name });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        return { nodeClass: ref.name, ready: false, message: `EC2NodeClass ${ref.name} does not exist` };
      }
      const stored = StoredNodeClassSchema.parse(rawClass);
      const nodeClass = NodeClassInputSchema.parse({ name: stored.metadata.name, spec: stored.spec });
      const resolution = await withCloudFailures(() => resolutions.resolve(cluster.name, cloud, nodeClass));
      await recordNodeClassResolution(guest, ref.name, resolution, {
        ...(nodeClass.spec.instanceProfile ? { instanceProfile: nodeClass.spec.instanceProfile } : {}),
        nowIso: now().toISOString(),
        current: rawClass,
      });
      const why = resolution.conditions.filter((c) => c.status !== 'True').map((c) => `${c.type}: ${c.message}`).join('; ');
      return { nodeClass: ref.name, ready: resolution.ready, ...(why ? { message: why } : {}) };
    },

    /**
     * Launches (or finds) the claim's instance and records it on the NodeClaim. Capacity
     * errors surface as a non-retryable `InsufficientCapacity` failure listing the
     * exhausted offerings, so the workflow can end and the provisioner re-plan. A launch
     * that succeeded after EC2 refused some offerings returns those too (`exhaustedOfferings`,
     * only when there are any), for the provisioner's unavailable-offerings memory.
     */
    async launchClaimInstance(ref: ClaimRef): Promise<LaunchOutcome> {
      // Heartbeats tell the server this attempt is alive (a killed worker's attempt is retried
      // after the heartbeat timeout, not the whole attempt timeout) and tell this attempt
      // when the server has given up on it: its signal aborts, and it launches nothing.
      const activity = activityContext();
      if (!activity) return launchClaimInstance(ref);
      return beating('launch', () => launchClaimInstance(ref, activity.cancellationSignal));
    },


    /** Terminates the instance (idempotent: gone is success) and records it on the claim. */
    async terminateClaimInstance({ cluster, name, providerId }: ClaimRef & { providerId: string }): Promise<{ outcome: string }> {
      const { claims, cloud } = await connect(cluster);
      const claim = await claims.get(name);
      if (claim) {
        await claims.patchStatus(claim, { conditions: [{ type: 'InstanceTerminating', status: 'True', reason: 'InstanceTerminating', message: providerId }] }, now().toISOString());
      }
      const outcome = await withCloudFailures(() => cloud.terminate(providerId));
      return { outcome: JSON.stringify(outcome) };
    },
  };
}

export type NodeClaimCloudActivities = ReturnType<typeof createNodeClaimCloudActivities>;

/** The running activity's context, or nothing when called outside an activity (tests, the legacy adapter). */
function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}
