import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import {
  EXPECTED_NODE_NAME_ANNOTATION,
  TERMINATION_FINALIZER,
  launchOptionsForClaim,
  type ClusterRef,
  type CsrPolicyConfig,
  type LaunchedInstance,
} from '../../core/lifecycle';
import { NodeClassInputSchema, isInsufficientCapacityError, pickAmi, withCloudFailures, type CloudInstance, type SubnetChoice } from '../cloud';
import { type ClusterResolver } from '../cluster';
import { attachedVolumes, drainPass, type DrainProgress } from '../kube/drain';
import { createEventRecorder } from '../kube/events';
import { isNotFound } from '../kube/errors';
import { NodeClaimStore, type StoredNodeClaim } from '../kube/nodeclaims';
import { recordNodeClassResolution } from '../kube/nodeclasses';
import { DISRUPTED_TAINT, INITIALIZED_LABEL, NODEPOOL_LABEL, NodeStore } from '../kube/nodes';

/** Port: CSR review for one node (activities/kube/csr.ts implements it). */
export type ReviewNodeCsrs = (
  cluster: ClusterRef,
  input: { nodeName: string; instance: LaunchedInstance; registered: boolean; policy: CsrPolicyConfig; nodeClaim: string },
) => Promise<{ approved: string[]; denied: { name: string; check: string }[]; failed: { name: string; forbidden: boolean }[] }>;

export interface NodeClaimActivityDeps {
  resolve: ClusterResolver;
  reviewNodeCsrs: ReviewNodeCsrs;
  now?: () => Date;
}

/** What the workflow needs to know about its claim, read at each step (the CR is the truth). */
export interface ClaimSnapshot {
  exists: boolean;
  uid?: string;
  deleting: boolean;
  nodePool?: string;
  expireAfter?: string;
  terminationGracePeriod?: string;
  providerID?: string;
  nodeName?: string;
}

const NODECLAIM_REF = (claim: StoredNodeClaim) => ({ apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: claim.metadata.name, uid: claim.metadata.uid });

function snapshot(claim: StoredNodeClaim | undefined): ClaimSnapshot {
  if (!claim) return { exists: false, deleting: false };
  const s: ClaimSnapshot = { exists: true, uid: claim.metadata.uid, deleting: claim.metadata.deletionTimestamp !== undefined };
  const pool = claim.metadata.labels?.[NODEPOOL_LABEL];
  if (pool) s.nodePool = pool;
  if (claim.spec.expireAfter) s.expireAfter = claim.spec.expireAfter;
  if (claim.spec.terminationGracePeriod) s.terminationGracePeriod = claim.spec.terminationGracePeriod;
  if (claim.status?.providerID) s.providerID = claim.status.providerID;
  if (claim.status?.nodeName) s.nodeName = claim.status.nodeName;
  return s;
}

function launched(instance: CloudInstance): LaunchedInstance {
  if (!instance.privateDnsName) {
    // A kubelet registers under its private DNS name; without one nothing can be approved.
    throw ApplicationFailure.retryable(`instance ${instance.instanceId} has no private DNS name yet`, 'InstanceNotReady');
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

const StoredNodeClassSchema = z.object({ metadata: z.object({ name: z.string() }), spec: z.record(z.string(), z.unknown()) });

/**
 * The NodeClaim lifecycle's activities. Each one is idempotent by the NodeClaim name (and
 * the instance's tags): the workflow may run any of them again after a crash or retry.
 */
export function createNodeClaimActivities(deps: NodeClaimActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const connect = async (cluster: ClusterRef) => {
    const c = await deps.resolve(cluster);
    return { ...c, claims: new NodeClaimStore(c.guest), nodes: new NodeStore(c.guest), event: createEventRecorder(c.guest.core) };
  };
  const mustGet = async (claims: NodeClaimStore, name: string) => {
    const claim = await claims.get(name);
    if (!claim) throw ApplicationFailure.nonRetryable(`NodeClaim ${name} no longer exists`, 'NodeClaimGone');
    return claim;
  };

  return {
    /** Reads the claim and, unless it is being deleted, makes sure our finalizer holds it. */
    async prepareNodeClaim(cluster: ClusterRef, name: string): Promise<ClaimSnapshot> {
      const { claims } = await connect(cluster);
      const claim = await claims.get(name);
      if (!claim || claim.metadata.deletionTimestamp) return snapshot(claim);
      return snapshot(await claims.ensureFinalizer(claim, TERMINATION_FINALIZER));
    },

    async observeNodeClaim(cluster: ClusterRef, name: string): Promise<ClaimSnapshot & { nodeDeleting: boolean; nodeExists: boolean }> {
      const { claims, nodes } = await connect(cluster);
      const s = snapshot(await claims.get(name));
      const node = s.nodeName ? await nodes.get(s.nodeName) : undefined;
      return { ...s, nodeExists: node !== undefined, nodeDeleting: node?.deleting ?? false };
    },

    /**
     * Launches (or finds) the claim's instance and records it on the NodeClaim. Capacity
     * errors surface as a non-retryable `InsufficientCapacity` failure listing the
     * exhausted offerings, so the workflow can end and the provisioner re-plan.
     */
    async launchInstance(cluster: ClusterRef, name: string): Promise<LaunchedInstance> {
      const { claims, cloud, guest, event } = await connect(cluster);
      const claim = await mustGet(claims, name);
      const ref = claim.spec.nodeClassRef;
      const unsupported = unsupportedNodeClassRef(ref);
      if (unsupported) {
        // Launching with some other class than the one named would be a guess: end the claim
        // (its Warning Event says why) instead.
        await claims.patchStatus(claim, { conditions: [{ type: 'Launched', status: 'False', reason: 'UnsupportedNodeClass', message: unsupported }] }, now().toISOString());
        throw ApplicationFailure.nonRetryable(unsupported, 'Invalid');
      }
      const nodeClassName = ref.name;
      /**
       * The class is missing or not ready: a condition, a Warning Event (counted, not
       * repeated), and a retry — unless the claim is being deleted, which ends the launch so
       * `kubectl delete` never waits on a class that may never come.
       */
      const nodeClassNotReady = async (reason: string, message: string): Promise<never> => {
        await claims.patchStatus(claim, { conditions: [{ type: 'NodeClassReady', status: 'False', reason, message }, { type: 'Launched', status: 'False', reason: 'NodeClassNotReady', message }] }, now().toISOString());
        await event({ involvedObject: NODECLAIM_REF(claim), type: 'Warning', reason: 'NodeClassNotReady', message });
        if (claim.metadata.deletionTimestamp) throw ApplicationFailure.nonRetryable(`NodeClaim ${name} is being deleted; not launching`, 'NodeClaimGone');
        throw ApplicationFailure.retryable(message, 'NodeClassNotReady');
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
      const resolution = await withCloudFailures(() => cloud.resolveNodeClass(nodeClass));
      await recordNodeClassResolution(guest, nodeClassName, resolution, {
        ...(nodeClass.spec.instanceProfile ? { instanceProfile: nodeClass.spec.instanceProfile } : {}),
        nowIso: now().toISOString(),
      });
      if (!resolution.ready) {
        const why = resolution.conditions.filter((c) => c.status !== 'True').map((c) => `${c.type}: ${c.message}`).join('; ');
        return await nodeClassNotReady('NodeClassNotReady', `EC2NodeClass ${nodeClassName} is not ready: ${why}`);
      }
      const amiFamily = nodeClass.spec.amiFamily === 'Custom' ? 'Custom' : 'AL2023';
      // The region's instance types and offerings as EC2 reports them (cached per cluster),
      // restricted to the zones this node class has subnets in.
      const instanceTypes = await withCloudFailures(() =>
        cloud.instanceTypes({ amiFamily, zones: [...new Set(resolution.subnets.map((s) => s.zone))].sort() }),
      );
      const options = launchOptionsForClaim(claim.spec.requirements, instanceTypes, { ...(claim.spec.resources?.requests ? { requests: claim.spec.resources.requests } : {}) });
      if (!options.ok) {
        await claims.patchStatus(claim, { conditions: [{ type: 'Launched', status: 'False', reason: 'InstanceTypesUnsatisfiable', message: options.reason }] }, now().toISOString());
        throw ApplicationFailure.nonRetryable(options.reason, 'Invalid');
      }
      const arch = instanceTypes.find((t) => t.name === options.options[0]?.instanceType)?.labels['kubernetes.io/arch'] ?? 'amd64';
      const ami = pickAmi(resolution.amis, arch === 'arm64' ? 'arm64' : 'x86_64');
      if (!ami) return await nodeClassNotReady('AMINotFound', `EC2NodeClass ${nodeClassName} resolved no AMI for ${arch}`);
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
            },
            imageId: ami.id,
            instanceTypes: options.options,
            capacityTypes: options.capacityTypes,
            zones: options.zones,
          }),
        );
      } catch (err) {
        const cause = err instanceof ApplicationFailure ? err.cause : err;
        if (isInsufficientCapacityError(cause)) {
          await claims.patchStatus(claim, { conditions: [{ type: 'Launched', status: 'False', reason: 'InsufficientCapacity', message: cause.message }] }, now().toISOString());
        }
        throw err;
      }
      const instance = launched(result.instance);
      const type = instanceTypes.find((t) => t.name === instance.instanceType);
      let updated = await claims.annotate(claim, { [EXPECTED_NODE_NAME_ANNOTATION]: instance.privateDnsName });
      updated = await claims.patchLabels(updated, {
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
        await event({ involvedObject: NODECLAIM_REF(claim), type: 'Normal', reason: 'Launched', message: `Launched ${instance.instanceId} (${instance.instanceType}, ${instance.capacityType}, ${instance.zone})` });
      }
      return instance;
    },

    /**
     * Reviews the CSRs naming this node, then looks for the Node by providerID. When it is
     * there, it is synced with the claim (labels, taints, finalizer, owner) and the claim
     * is Registered.
     */
    async reconcileRegistration(
      cluster: ClusterRef,
      input: { name: string; instance: LaunchedInstance; policy: CsrPolicyConfig },
    ): Promise<{ registered: boolean; nodeName?: string; approved: string[]; denied: { name: string; check: string }[]; failed: { name: string; forbidden: boolean }[] }> {
      const { claims, nodes, event } = await connect(cluster);
      const claim = await mustGet(claims, input.name);
      const node = await nodes.findByProviderId(input.instance.providerId);
      const csrs = await deps.reviewNodeCsrs(cluster, {
        nodeName: input.instance.privateDnsName,
        instance: input.instance,
        registered: node !== undefined,
        policy: input.policy,
        nodeClaim: input.name,
      });
      if (!node) return { registered: false, ...csrs };
      await nodes.syncRegistered(claim, node.name);
      if (claim.status?.nodeName !== node.name || !claim.status?.conditions?.some((c) => c.type === 'Registered' && c.status === 'True')) {
        await claims.patchStatus(claim, { nodeName: node.name, conditions: [{ type: 'Registered', status: 'True', reason: 'Registered', message: `Node ${node.name}` }] }, now().toISOString());
        await event({ involvedObject: NODECLAIM_REF(claim), type: 'Normal', reason: 'Registered', message: `Status condition transitioned, Type: Registered, Status: True, Node: ${node.name}` });
      }
      return { registered: true, nodeName: node.name, ...csrs };
    },

    /** Initialized = Ready, startup and ephemeral taints gone, requested extended resources present. */
    async reconcileInitialization(cluster: ClusterRef, name: string, nodeName: string): Promise<{ initialized: boolean; blocker?: string }> {
      const { claims, nodes, event } = await connect(cluster);
      const claim = await mustGet(claims, name);
      const node = await nodes.get(nodeName);
      if (!node) return { initialized: false, blocker: `Node ${nodeName} not found` };
      const blocker = nodes.initializationBlocker(claim, node);
      if (blocker) {
        await claims.patchStatus(claim, { conditions: [{ type: 'Initialized', status: 'Unknown', reason: 'AwaitingInitialization', message: blocker }] }, now().toISOString());
        return { initialized: false, blocker };
      }
      await nodes.label(nodeName, { [INITIALIZED_LABEL]: 'true' });
      await claims.patchStatus(claim, { conditions: [{ type: 'Initialized', status: 'True', reason: 'Initialized', message: '' }] }, now().toISOString());
      await event({ involvedObject: NODECLAIM_REF(claim), type: 'Normal', reason: 'Initialized', message: `Node ${nodeName} is initialized` });
      return { initialized: true };
    },

    /** Marks the node disrupted (no new pods) and says why on the claim. */
    async beginDrain(cluster: ClusterRef, name: string, nodeName: string | undefined, reason: string): Promise<void> {
      const { claims, nodes, event } = await connect(cluster);
      const claim = await claims.get(name);
      if (nodeName && (await nodes.get(nodeName))) await nodes.ensureTaint(nodeName, DISRUPTED_TAINT);
      if (!claim) return;
      await claims.patchStatus(claim, { conditions: [{ type: 'Drained', status: 'False', reason: 'Draining', message: reason }] }, now().toISOString());
      await event({ involvedObject: NODECLAIM_REF(claim), type: 'Normal', reason: 'DisruptionTerminating', message: `Draining and terminating: ${reason}` });
    },

    async drainNode(cluster: ClusterRef, name: string, nodeName: string, pastDeadline: boolean): Promise<DrainProgress> {
      const { claims, guest, nodes } = await connect(cluster);
      if (!(await nodes.get(nodeName))) return { remaining: [], evicted: [], blockedByPdb: [], doNotDisrupt: [], forceDeleted: [], done: true };
      const progress = await drainPass(guest, nodeName, { pastDeadline });
      const claim = await claims.get(name);
      if (claim && progress.done) {
        await claims.patchStatus(claim, { conditions: [{ type: 'Drained', status: 'True', reason: 'Drained', message: '' }] }, now().toISOString());
      } else if (claim && (progress.blockedByPdb.length > 0 || progress.doNotDisrupt.length > 0)) {
        const message = [
          progress.blockedByPdb.length > 0 ? `eviction refused by a PodDisruptionBudget: ${progress.blockedByPdb.join(', ')}` : '',
          progress.doNotDisrupt.length > 0 ? `waiting for do-not-disrupt pods until the grace period ends: ${progress.doNotDisrupt.join(', ')}` : '',
        ].filter(Boolean).join('; ');
        await claims.patchStatus(claim, { conditions: [{ type: 'Drained', status: 'False', reason: 'Draining', message }] }, now().toISOString());
      }
      return progress;
    },

    async checkVolumesDetached(cluster: ClusterRef, name: string, nodeName: string): Promise<{ detached: boolean; attachments: string[] }> {
      const { claims, guest } = await connect(cluster);
      const attachments = await attachedVolumes(guest, nodeName);
      const claim = await claims.get(name);
      if (claim) {
        const detached = attachments.length === 0;
        await claims.patchStatus(
          claim,
          { conditions: [{ type: 'VolumesDetached', status: detached ? 'True' : 'False', reason: detached ? 'VolumesDetached' : 'AwaitingVolumeDetachment', message: attachments.join(', ') }] },
          now().toISOString(),
        );
      }
      return { detached: attachments.length === 0, attachments };
    },

    /** Terminates the instance (idempotent: gone is success) and records it on the claim. */
    async terminateInstance(cluster: ClusterRef, name: string, providerId: string): Promise<{ outcome: string }> {
      const { claims, cloud } = await connect(cluster);
      const claim = await claims.get(name);
      if (claim) {
        await claims.patchStatus(claim, { conditions: [{ type: 'InstanceTerminating', status: 'True', reason: 'InstanceTerminating', message: providerId }] }, now().toISOString());
      }
      const outcome = await withCloudFailures(() => cloud.terminate(providerId));
      return { outcome: JSON.stringify(outcome) };
    },

    /** Deletes the Node, then releases and deletes the NodeClaim. The last step of a life. */
    async finalizeNodeClaim(
      cluster: ClusterRef,
      { name, uid }: { name: string; uid: string },
      nodeName: string | undefined,
      reason: string,
      warning: boolean,
      providerId?: string,
    ): Promise<void> {
      const { claims, nodes, event } = await connect(cluster);
      if (nodeName) await nodes.deleteNode(nodeName);
      // A kubelet that got its certificate but registered only after the claim's life began
      // to end left a Node the claim never recorded: found by the instance's providerID.
      const unrecorded = providerId ? await nodes.findByProviderId(providerId) : undefined;
      if (unrecorded && unrecorded.name !== nodeName) await nodes.deleteNode(unrecorded.name);
      const claim = await claims.get(name);
      // A claim recreated under the same name belongs to someone else's life: leave it be.
      if (!claim || claim.metadata.uid !== uid) return;
      await event({ involvedObject: NODECLAIM_REF(claim), type: warning ? 'Warning' : 'Normal', reason: warning ? 'TerminatedUnhealthy' : 'Terminated', message: `NodeClaim ${name} terminated: ${reason}` });
      if (!claim.metadata.deletionTimestamp) await claims.delete(name);
      const current = await claims.get(name);
      if (current) await claims.removeFinalizer(current, TERMINATION_FINALIZER);
    },
  };
}

export type NodeClaimActivities = ReturnType<typeof createNodeClaimActivities>;
