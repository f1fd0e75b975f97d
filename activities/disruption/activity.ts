import pLimit from 'p-limit';
import { beating, heartbeatStage } from '../heartbeat';
import { z } from 'zod';
import { normaliseDocument } from '../../core/api/normalise';
import { type EC2NodeClass } from '../../core/api/ec2nodeclass';
import { type NodePool } from '../../core/api/nodepool';
import { StoredNodeClaimSchema, type StoredNodeClaim } from '../../core/api/nodeclaim';
import {
  DO_NOT_DISRUPT,
  INSTANCE_DRIFT_REASONS,
  INSTANCE_NETWORK_ANNOTATION,
  instanceNetworkValue,
  parseInstanceNetwork,
  NODECLASS_HASH_ANNOTATION,
  NODECLASS_HASH_VERSION,
  NODECLASS_HASH_VERSION_ANNOTATION,
  driftOf,
  nodeClassHash,
  type DriftFacts,
  consolidatableAt,
  disruptionRound,
  nominationWindowMs,
  stillValid,
  type Blocked,
  type CommandCandidate,
  type CandidateNode,
  type CandidatePod,
  type DisruptionCommand,
  type RoundInput,
  type RoundPool,
} from '../../core/disruption';
import { ClusterRefSchema, type ClusterRef } from '../../core/lifecycle';
import { NODEPOOL_HASH_VERSION, fnv1a64, nodePoolHash } from '../../core/provisioning/nodeclaims';
import { requirements, type Requirements } from '../../core/scheduling/requirements';
import { NodeClaimStore } from '../kube/nodeclaims';
import { recordNodeClassResolution } from '../kube/nodeclasses';
import { NodeClassInputSchema } from '../cloud';
import { ResolutionCache } from '../cloud/resolution-cache';
import { RoundNodeSchema, RoundPdbSchema, RoundPodSchema, type RoundPdb, type RoundPod } from './round-objects';
import { selectorMatches } from '../../core/packing/selectors';
import { type ClusterResolver } from '../cluster';
import { type KubeClients } from '../kube/clients';
import { isConflict, isNotFound } from '../kube/errors';
import { createEventRecorder } from '../kube/events';
import { DISRUPTED_UNTIL_ANNOTATION, NodeStore } from '../kube/nodes';
import { activityLog } from '../log';
import { summariseCluster, type AutonodeMetrics, type ClusterSnapshot } from '../metrics';
import { listItems, parseListItems } from '../kube/lists';

export const DISRUPTED_TAINT = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' } as const;

/** how many claims a cloud pass annotates at once */
const CLOUD_FACTS_WRITES = 8;

export interface DisruptionActivityDeps {
  resolve: ClusterResolver;
  now?: () => Date;
  /** how long a node class's resolution (AMIs, subnets, security groups) is reused before EC2 is asked again; default 60 s */
  nodeClassRefreshMs?: number;
  /** where disrupted claims are counted and each round's view of the cluster observed */
  metrics?: AutonodeMetrics;
}

/** Per NodeClaim: the pods on its node last round, and when that set last changed (epoch ms). Kept by the workflow. */
export type PodEventMemory = Record<string, { pods: string; at: number }>;

export interface PlanRoundInput {
  cluster: ClusterRef;
  memory?: PodEventMemory;
  /** the provisioner's batch max (nomination window = max(2 × it, 10 s)); default 10 s */
  batchMaxMs?: number;
}

export interface PlanRoundResult {
  command?: DisruptionCommand;
  /** single-node consolidation's candidates, when there is no command */
  consolidate?: CommandCandidate[];
  /** multi-node consolidation's candidates (at least 2), when there is no command */
  multiNode?: CommandCandidate[];
  considered: Record<string, number>;
  blocked: Blocked[];
  memory: PodEventMemory;
  /** managed nodes seen */
  nodes: number;
  /** the EC2NodeClasses' names and generations, digested: when it moves, the workflow runs the cloud pass at once */
  classesKey?: string;
}

const nodeClaimsApi = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' } as const;
const conditionTrue = (claim: StoredNodeClaim, type: string) => claim.status?.conditions?.find((c) => c.type === type && c.status === 'True');

function candidatePod(pod: RoundPod, pdbs: readonly RoundPdb[]): CandidatePod {
  const meta = pod.metadata;
  const labels = meta.labels ?? {};
  const terminal = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  const daemon = (meta.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet');
  const mirror = meta.annotations?.['kubernetes.io/config.mirror'] !== undefined;
  const matching = pdbs.filter((p) => p.metadata?.namespace === meta.namespace && selectorMatches(p.spec?.selector, labels));
  const blocking = matching.length > 1 ? `${matching.length} PodDisruptionBudgets (more than one always blocks)` : matching[0] !== undefined && (matching[0].status?.disruptionsAllowed ?? 0) < 1 ? `PodDisruptionBudget ${meta.namespace}/${matching[0].metadata?.name}` : undefined;
  const cost = Number(meta.annotations?.['controller.kubernetes.io/pod-deletion-cost']);
  return {
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    doNotDisrupt: !terminal && meta.annotations?.[DO_NOT_DISRUPT] === 'true',
    reschedulable: !terminal && !daemon && !mirror && meta.deletionTimestamp === undefined,
    ...(blocking !== undefined && !terminal ? { blockingPdb: blocking } : {}),
    ...(Number.isFinite(cost) ? { deletionCost: cost } : {}),
    ...(pod.spec?.priority !== undefined ? { priority: pod.spec.priority } : {}),
  };
}

/** The cluster as the disruption round sees it, and the pod-event memory brought up to date. */
/** A claim whose Drifted condition must say something new: drifted (and why), or no longer. */
interface DriftSeen {
  claim: StoredNodeClaim;
  drift?: { reason: string; message: string };
  /** the condition already says this */
  known: boolean;
}

const StoredClassSchema = z.object({
  metadata: z.object({ name: z.string(), deletionTimestamp: z.string().optional() }),
  spec: z.record(z.string(), z.unknown()),
  status: z.object({ amis: z.array(z.object({ id: z.string() })).optional(), subnets: z.array(z.object({ id: z.string() })).optional(), securityGroups: z.array(z.object({ id: z.string() })).optional() }).optional(),
});
const ClassGenerationSchema = z.object({ metadata: z.object({ name: z.string(), generation: z.number().optional() }) });
const ClassStatusSchema = z.object({
  metadata: z.object({ name: z.string() }),
  status: z
    .object({
      amis: z.array(z.object({ id: z.string() })).optional(),
      subnets: z.array(z.object({ id: z.string() })).optional(),
      securityGroups: z.array(z.object({ id: z.string() })).optional(),
    })
    .optional(),
});

/** A launched claim without the class hash autonode stamps (launched before it did, or by Karpenter): stamped with the hash now, as Karpenter re-stamps on a hash version change. */
interface HashToStamp {
  claim: StoredNodeClaim;
  hash: string;
}

/** Each node class as drift sees it: its static hash (from the spec) and what its status says it resolves to. */
function nodeClassFacts(raw: unknown): [string, NonNullable<DriftFacts['nodeClass']>] | undefined {
  const c = ClassStatusSchema.safeParse(raw);
  if (!c.success) return undefined;
  const normalised = normaliseDocument(raw);
  const model = normalised.status === 'ok' ? normalised.objects.find((o): o is EC2NodeClass => o.kind === 'EC2NodeClass') : undefined;
  const status = c.data.status ?? {};
  return [
    c.data.metadata.name,
    {
      ...(model ? { hash: nodeClassHash(model), hashVersion: NODECLASS_HASH_VERSION } : {}),
      amis: (status.amis ?? []).map((a) => a.id),
      subnets: (status.subnets ?? []).map((x) => x.id),
      securityGroups: (status.securityGroups ?? []).map((g) => g.id),
    },
  ];
}

export async function readRound(
  guest: KubeClients,
  now: Date,
  memory: PodEventMemory,
  batchMaxMs: number,
): Promise<{ input: RoundInput; memory: PodEventMemory; nodes: number; classesKey: string; drifts: DriftSeen[]; toStamp: HashToStamp[]; leftoverTaints: { nodeClaim: string; node: string }[]; snapshot: ClusterSnapshot }> {
  const [claimsRaw, nodesRaw, podsRaw, pdbsRaw, poolsRaw, classesRaw] = await Promise.all([
    guest.customObjects.listClusterCustomObject(nodeClaimsApi),
    guest.getJson('/api/v1/nodes'),
    guest.getJson('/api/v1/pods'),
    guest.getJson('/apis/policy/v1/poddisruptionbudgets'),
    guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools' }),
    guest.customObjects.listClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses' }),
  ]);
  // each node class's hash, and what it resolves to now (its status, written when it is resolved)
  const classItems = listItems(classesRaw);
  const classFacts = new Map(classItems.flatMap((raw) => {
    const facts = nodeClassFacts(raw);
    return facts ? [facts] : [];
  }));
  // a class created or edited (its generation moves) resolves to other things: the cloud pass is due now
  const classesKey = fnv1a64(
    classItems
      .map((raw) => {
        const meta = ClassGenerationSchema.safeParse(raw);
        return meta.success ? `${meta.data.metadata.name}@${meta.data.metadata.generation ?? 0}` : '';
      })
      .sort()
      .join(','),
  ).toString(36);
  const claims = listItems(claimsRaw).map((c) => StoredNodeClaimSchema.parse(c));
  const nodes = parseListItems(RoundNodeSchema, nodesRaw, 'Node');
  const pods = parseListItems(RoundPodSchema, podsRaw, 'Pod');
  const pdbs = parseListItems(RoundPdbSchema, pdbsRaw, 'PodDisruptionBudget');
  const nodeByName = new Map(nodes.items.map((n) => [n.metadata.name, n]));
  const podsByNode = new Map<string, RoundPod[]>();
  for (const pod of pods.items) {
    const node = pod.spec?.nodeName;
    if (!node) continue;
    const onNode = podsByNode.get(node);
    if (onNode) onNode.push(pod);
    else podsByNode.set(node, [pod]);
  }
  const pools = new Map<string, RoundPool>();
  const templates = new Map<string, { hash: string; hashVersion: string; requirements: Requirements }>();
  for (const raw of listItems(poolsRaw)) {
    const normalised = normaliseDocument(raw);
    const pool = normalised.status === 'ok' ? normalised.objects.find((o): o is NodePool => o.kind === 'NodePool') : undefined;
    const name = pool?.metadata.name;
    if (!pool || !name) continue;
    pools.set(name, { name, disruption: pool.spec.disruption, budgets: pool.spec.disruption.budgets, counts: { nodes: 0, disrupting: 0 } });
    let reqs: Requirements = {};
    try {
      reqs = requirements(...pool.spec.template.spec.requirements);
    } catch {
      // a requirement the API server took but autonode cannot read: judged by the hash alone
    }
    templates.set(name, { hash: nodePoolHash(pool), hashVersion: NODEPOOL_HASH_VERSION, requirements: reqs });
  }
  const t = now.getTime();
  const leftoverTaints: { nodeClaim: string; node: string }[] = [];
  const nextMemory: PodEventMemory = {};
  const drifts: DriftSeen[] = [];
  const toStamp: HashToStamp[] = [];
  const candidates: CandidateNode[] = [];
  for (const claim of claims) {
    const name = claim.metadata.name;
    const poolName = claim.metadata.labels?.['karpenter.sh/nodepool'];
    const nodeName = claim.status?.nodeName;
    const node = nodeName ? nodeByName.get(nodeName) : undefined;
    const initialized = conditionTrue(claim, 'Initialized');
    // A claim whose own workflow ends its life (expireAfter, a node never Ready, a `disrupt`
    // Update) drains before it deletes the claim; Karpenter deletes such a claim first. Its
    // Drained condition (written only once the drain begins) says it is going: it counts
    // against the budgets as Karpenter's MarkedForDeletion does, and is no candidate.
    const ending = claim.status?.conditions?.some((c) => c.type === 'Drained') ?? false;
    const deleting = claim.metadata.deletionTimestamp !== undefined || node?.metadata?.deletionTimestamp !== undefined || ending;
    const ready = node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    const pool = poolName ? pools.get(poolName) : undefined;
    if (pool && initialized && !conditionTrue(claim, 'InstanceTerminating')) {
      pool.counts.nodes++;
      if (deleting || !ready) pool.counts.disrupting++;
    }
    const onNode = nodeName ? (podsByNode.get(nodeName) ?? []) : [];
    const template = poolName ? templates.get(poolName) : undefined;
    const nodeClass = classFacts.get(claim.spec.nodeClassRef.name);
    const annotations = claim.metadata.annotations ?? {};
    const providerId = claim.status?.providerID;
    // the instance's subnet and security groups as the cloud last said (launch, cloud pass)
    const instance = parseInstanceNetwork(annotations[INSTANCE_NETWORK_ANNOTATION]);
    if (providerId && nodeClass?.hash !== undefined && annotations[NODECLASS_HASH_VERSION_ANNOTATION] !== NODECLASS_HASH_VERSION && claim.metadata.deletionTimestamp === undefined) toStamp.push({ claim, hash: nodeClass.hash });
    const judged = template
      ? driftOf({
          claim: {
            annotations,
            labels: claim.metadata.labels ?? {},
            ...(claim.status?.imageID ? { imageId: claim.status.imageID } : {}),
            ...(instance?.subnetId ? { subnetId: instance.subnetId } : {}),
            ...(instance?.securityGroupIds ? { securityGroupIds: instance.securityGroupIds } : {}),
          },
          pool: template,
          ...(nodeClass ? { nodeClass } : {}),
        })
      : undefined;
    const driftedCondition = claim.status?.conditions?.find((c) => c.type === 'Drifted');
    // subnet or security-group drift needs the instance's facts: a claim the cloud pass has not
    // described yet keeps what the condition says rather than flapping it off and on again
    const unjudgeable = !judged && instance === undefined && driftedCondition?.status === 'True' && (INSTANCE_DRIFT_REASONS as readonly string[]).includes(driftedCondition.reason ?? '');
    const drift = unjudgeable ? { reason: driftedCondition.reason!, message: driftedCondition.message ?? '' } : judged;
    if (drift) drifts.push({ claim, drift, known: driftedCondition?.status === 'True' && driftedCondition.reason === drift.reason });
    else if (driftedCondition?.status === 'True') drifts.push({ claim, known: false });
    const driftedSince = driftedCondition?.status === 'True' && driftedCondition.lastTransitionTime ? Date.parse(String(driftedCondition.lastTransitionTime)) : t;
    // the pod set as a hash: the memory rides in the workflow's history every round
    const podsKey = fnv1a64(onNode.filter((p) => p.metadata?.deletionTimestamp === undefined).map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort().join(',')).toString(36);
    const seen = memory[name];
    // karpenter.sh/disrupted: an interruption moving the node (until its annotation says), or a
    // leftover of a job or command that no longer runs (the node's own drain marks its claim first)
    const tainted = node?.spec?.taints?.some((x) => x.key === DISRUPTED_TAINT.key) ?? false;
    const heldUntil = Date.parse(node?.metadata?.annotations?.[DISRUPTED_UNTIL_ANNOTATION] ?? '');
    const heldElsewhere = tainted && Number.isFinite(heldUntil) && heldUntil > t;
    if (tainted && !heldElsewhere && !deleting && nodeName && node) leftoverTaints.push({ nodeClaim: name, node: nodeName });
    const initializedAt = initialized?.lastTransitionTime ? Date.parse(String(initialized.lastTransitionTime)) : undefined;
    // a pod set that changed since last round is a pod event now; the first sighting counts from initialization
    nextMemory[name] = seen === undefined ? { pods: podsKey, at: initializedAt ?? t } : seen.pods === podsKey ? seen : { pods: podsKey, at: t };
    candidates.push({
      nodeClaim: name,
      ...(nodeName && node ? { node: nodeName } : {}),
      ...(poolName ? { nodePool: poolName } : {}),
      initialized: initialized !== undefined,
      deleting,
      ...(heldElsewhere ? { disruptedElsewhere: true } : {}),
      doNotDisrupt: node?.metadata?.annotations?.[DO_NOT_DISRUPT] === 'true' || claim.metadata.annotations?.[DO_NOT_DISRUPT] === 'true',
      labels: { ...(claim.metadata.labels ?? {}), ...(node?.metadata?.labels ?? {}) },
      ...(claim.spec.terminationGracePeriod ? { terminationGracePeriod: claim.spec.terminationGracePeriod } : {}),
      // the provisioner counts on a node it just saw initialize for pods it nominated
      ...(initializedAt !== undefined ? { nominatedUntil: initializedAt + nominationWindowMs(batchMaxMs) } : {}),
      ...(() => {
        const at = pool ? consolidatableAt({ ...(initializedAt !== undefined ? { initializedAt } : {}), lastPodEventAt: nextMemory[name]!.at, consolidateAfter: pool.disruption.consolidateAfter }) : undefined;
        return at !== undefined ? { consolidatableAt: at } : {};
      })(),
      ...(drift ? { drifted: { reason: drift.reason, since: driftedSince } } : {}),
      pods: onNode.map((p) => candidatePod(p, pdbs.items)),
    });
  }
  return { input: { now: t, nodes: candidates, pools }, memory: nextMemory, nodes: candidates.length, classesKey, drifts, toStamp, leftoverTaints, snapshot: summariseCluster({ nodes: nodes.raw, pods: pods.raw }) };
}

/** What one cloud pass found and wrote (the disruption workflow's status shows the last). */
export interface CloudFactsResult {
  /** the cluster's live instances listed */
  instances: number;
  /** EC2NodeClasses whose status was written (what they resolve to moved) */
  classesWritten: number;
  /** claims whose instance-network annotation was written (new, or the instance moved) */
  claimsWritten: number;
}

/** karpenter_nodeclaims_disrupted_total's reason: Karpenter's lower-cased disruption reason. */
const DISRUPTED_REASON = { Empty: 'empty', Drifted: 'drifted', Underutilized: 'underutilized' } as const;

const CommandSchema = z.object({
  method: z.enum(['emptiness', 'drift', 'consolidation']),
  reason: z.enum(['Empty', 'Drifted', 'Underutilized']),
  candidates: z.array(z.object({ nodeClaim: z.string(), node: z.string(), nodePool: z.string() })),
  replace: z.boolean().default(false),
  summary: z.string(),
});

/**
 * The disruption workflow's activities (control queue: they read and write the guest).
 * `planRound` decides, `validateCommand` re-decides after the delay, `startCommand` taints
 * and records, `deleteCandidates` hands the nodes to their NodeClaim workflows (drain,
 * terminate), `commandNodesLeft` says which are still there.
 */
export function createDisruptionActivities(deps: DisruptionActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const forCluster = async (raw: unknown) => (await deps.resolve(ClusterRefSchema.parse(raw))).guest;
  const resolutions = new ResolutionCache(deps.nodeClassRefreshMs ?? 60_000);
  /**
   * Each EC2NodeClass's status says what it resolves to now: the AMI a release moved it to
   * (the enablement edits the class's spec), or one published under its selector since.
   * Drift compares each claim with this status; without a refresh only a launch wrote it.
   * Says how many classes' status it wrote.
   */
  async function refreshNodeClasses(cluster: ClusterRef): Promise<number> {
    let written = 0;
    const { guest, cloud } = await deps.resolve(cluster);
    const listed = listItems(await guest.customObjects.listClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses' }));
    for (const raw of listed) {
      const stored = StoredClassSchema.safeParse(raw);
      if (!stored.success || stored.data.metadata.deletionTimestamp !== undefined) continue;
      const input = NodeClassInputSchema.safeParse({ name: stored.data.metadata.name, spec: stored.data.spec });
      if (!input.success) continue;
      const resolution = await resolutions.resolve(cluster.name, cloud, input.data).catch(() => undefined);
      // not resolvable now (throttled, unready): the launch path reports why; drift waits
      if (!resolution?.ready) continue;
      // written when what it resolves to moved: AMIs, subnets or security groups
      const ids = (xs: readonly { id: string }[] | undefined) => (xs ?? []).map((x) => x.id).sort().join(',');
      const had = [ids(stored.data.status?.amis), ids(stored.data.status?.subnets), ids(stored.data.status?.securityGroups)].join(';');
      const has = [ids(resolution.amis), ids(resolution.subnets), ids(resolution.securityGroups)].join(';');
      if (had === has) continue;
      await recordNodeClassResolution(guest, stored.data.metadata.name, resolution, { nowIso: now().toISOString(), current: raw }).then(
        (wrote) => void (wrote && written++),
        (err: unknown) => {
          if (!isNotFound(err)) throw err;
        },
      );
    }
    return written;
  }

  return {
    planRound: (raw: PlanRoundInput): Promise<PlanRoundResult> => beating('round', async () => {
      const cluster = ClusterRefSchema.parse(raw.cluster);
      const guest = await forCluster(cluster);
      // each step named in the beats (activities/heartbeat.ts): a round that outlives its worker says where.
      // The round reads the guest only: what the cloud says (node class resolution, each
      // instance's subnet and groups) is brought in by `refreshCloudFacts`, on its own cadence.
      heartbeatStage('round: read');
      const read = await readRound(guest, now(), raw.memory ?? {}, raw.batchMaxMs ?? 10_000);
      deps.metrics?.observeCluster(raw.cluster.name, read.snapshot);
      heartbeatStage('round: stamp');
      const store = new NodeClaimStore(guest);
      for (const { claim, hash } of read.toStamp) {
        await store.annotate(claim, { [NODECLASS_HASH_ANNOTATION]: hash, [NODECLASS_HASH_VERSION_ANNOTATION]: NODECLASS_HASH_VERSION }).catch((err: unknown) => {
          // changed meanwhile (409) or gone: the next round stamps it
          if (!isNotFound(err) && !isConflict(err)) throw err;
        });
      }
      // Drifted=True with the reason on each drifted claim (kubectl shows it), False when it no longer is
      for (const d of read.drifts.filter((x) => !x.known)) {
        const condition = d.drift ? { type: 'Drifted', status: 'True' as const, reason: d.drift.reason, message: d.drift.message } : { type: 'Drifted', status: 'False' as const, reason: 'NotDrifted', message: '' };
        await store.patchStatus(d.claim, { conditions: [condition] }, now().toISOString()).catch((err: unknown) => {
          // changed meanwhile (409) or gone: the next round writes it
          if (!isNotFound(err) && !isConflict(err)) throw err;
        });
      }
      heartbeatStage('round: decide');
      const round = disruptionRound(read.input);
      heartbeatStage('round: events');
      // an admin who set do-not-disrupt, a PDB or a budget hears why the node stays
      const event = createEventRecorder(guest.core);
      // a round begins with no command of this workflow under way: a disrupted taint nothing
      // holds is a leftover (an interruption job or a command ended mid-way); it goes, so the
      // node takes pods again and is a candidate like any other
      const nodes = new NodeStore(guest);
      for (const leftover of read.leftoverTaints) {
        // the claim's own drain marks the claim before it taints: read it again, right before
        const claim = await store.get(leftover.nodeClaim);
        if (!claim || claim.metadata.deletionTimestamp !== undefined || claim.status?.conditions?.some((c) => c.type === 'Drained')) continue;
        await nodes.removeTaint(leftover.node, DISRUPTED_TAINT.key);
        activityLog('info', 'leftover karpenter.sh/disrupted taint removed', { cluster: cluster.name, nodeclaim: leftover.nodeClaim, node: leftover.node });
        await event({ involvedObject: { apiVersion: 'v1', kind: 'Node', name: leftover.node }, type: 'Normal', reason: 'DisruptionTaintRemoved', message: 'karpenter.sh/disrupted was left by a disruption or interruption that no longer runs; removed' });
      }
      for (const b of round.blocked) {
        await event({ involvedObject: { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: b.nodeClaim }, type: 'Normal', reason: 'DisruptionBlocked', message: `Cannot disrupt NodeClaim: ${b.reason}` });
      }
      return { ...(round.command ? { command: round.command } : {}), ...(round.consolidate?.length ? { consolidate: round.consolidate } : {}), ...(round.multiNode?.length ? { multiNode: round.multiNode } : {}), considered: round.considered, blocked: round.blocked, memory: read.memory, nodes: read.nodes, classesKey: read.classesKey };
    }),

    /**
     * What drift needs from the cloud, written into the guest where every round reads it:
     * each EC2NodeClass's status (the AMIs, subnets and security groups it resolves to now)
     * and each launched claim's INSTANCE_NETWORK_ANNOTATION (the subnet and groups its
     * instance is in now). Only what moved is written. The disruption workflow runs it every
     * few minutes (Karpenter re-checks drift every 5), not in each 10-second round: a round
     * that waited on EC2 (a paged DescribeInstances, three resolution calls, throttling) ran
     * long enough that, in `npm run scale`'s chaos, worker kills ended most of its attempts.
     */
    refreshCloudFacts: (raw: { cluster: ClusterRef }): Promise<CloudFactsResult> =>
      beating('cloud facts', async () => {
        const cluster = ClusterRefSchema.parse(raw.cluster);
        const { guest, cloud } = await deps.resolve(cluster);
        heartbeatStage('cloud facts: node classes');
        const classesWritten = await refreshNodeClasses(cluster);
        heartbeatStage('cloud facts: instances');
        const instances = new Map((await cloud.list()).map((i) => [i.providerId, i]));
        heartbeatStage('cloud facts: claims');
        const store = new NodeClaimStore(guest);
        const claims = listItems(await guest.customObjects.listClusterCustomObject(nodeClaimsApi)).map((c) => StoredNodeClaimSchema.parse(c));
        let claimsWritten = 0;
        // In a scale-out every claim launched since the last pass is written once: a hundred
        // writes one after another on a loaded API server took minutes, long enough for
        // worker restarts to end attempt after attempt. A few at a time.
        const limit = pLimit(CLOUD_FACTS_WRITES);
        const writes = claims.map((claim) => {
          const instance = claim.status?.providerID ? instances.get(claim.status.providerID) : undefined;
          // an instance not listed is gone or not ours to describe: its lifecycle and the GC see to it
          const value = instance ? instanceNetworkValue(instance) : undefined;
          if (value === undefined || claim.metadata.deletionTimestamp !== undefined || claim.metadata.annotations?.[INSTANCE_NETWORK_ANNOTATION] === value) return undefined;
          return limit(() =>
            store.annotate(claim, { [INSTANCE_NETWORK_ANNOTATION]: value }).then(
              () => void claimsWritten++,
              (err: unknown) => {
                // changed meanwhile (409) or gone: the next pass writes it
                if (!isNotFound(err) && !isConflict(err)) throw err;
              },
            ),
          );
        });
        // every write settles before the attempt ends, so none lands after a failed attempt
        const failed = (await Promise.allSettled(writes)).find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
        return { instances: instances.size, classesWritten, claimsWritten };
      }),

    validateCommand: (raw: { cluster: ClusterRef; command: DisruptionCommand; memory?: PodEventMemory; batchMaxMs?: number }): Promise<{ ok: true } | { ok: false; reason: string }> =>
      beating('validate', async () => {
        const guest = await forCluster(raw.cluster);
        const command = CommandSchema.parse(raw.command);
        const read = await readRound(guest, now(), raw.memory ?? {}, raw.batchMaxMs ?? 10_000);
        return stillValid(command, read.input);
      }),

    /** Taints every candidate node `karpenter.sh/disrupted:NoSchedule` and says so on each claim and node. */
    async startCommand(raw: { cluster: ClusterRef; command: DisruptionCommand }): Promise<void> {
      const guest = await forCluster(raw.cluster);
      const command = CommandSchema.parse(raw.command);
      const nodes = new NodeStore(guest);
      const event = createEventRecorder(guest.core);
      for (const c of command.candidates) {
        await nodes.ensureTaint(c.node, { ...DISRUPTED_TAINT });
        const message = `Disrupting NodeClaim: ${command.reason} (${command.summary})`;
        await event({ involvedObject: { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: c.nodeClaim }, type: 'Normal', reason: 'Disrupting', message });
        await event({ involvedObject: { apiVersion: 'v1', kind: 'Node', name: c.node }, type: 'Normal', reason: 'Disrupting', message });
      }
    },

    /** Deletes the candidates' NodeClaims: each one's workflow drains its node and terminates its instance. */
    async deleteCandidates(raw: { cluster: ClusterRef; command: DisruptionCommand }): Promise<void> {
      const guest = await forCluster(raw.cluster);
      const command = CommandSchema.parse(raw.command);
      const store = new NodeClaimStore(guest);
      for (const c of command.candidates) {
        // A claim already being deleted (a retry of this activity, or kubectl) is not counted
        // as disrupted again: the count is of deletions this call began.
        const before = await store.get(c.nodeClaim);
        await guest.customObjects.deleteClusterCustomObject({ ...nodeClaimsApi, name: c.nodeClaim }).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
        if (before && before.metadata.deletionTimestamp === undefined) {
          const reason = DISRUPTED_REASON[command.reason];
          deps.metrics?.nodeClaimsDisrupted.inc({ cluster: raw.cluster.name, reason, nodepool: c.nodePool });
          activityLog('info', 'NodeClaim disrupted', { cluster: raw.cluster.name, nodeclaim: c.nodeClaim, nodepool: c.nodePool, reason });
        }
      }
    },

    /** Of the replacement NodeClaims, which are Initialized and which are gone (an ICE, a launch or registration that failed). */
    async replacementsState(raw: { cluster: ClusterRef; names: string[] }): Promise<{ initialized: string[]; gone: string[] }> {
      const guest = await forCluster(raw.cluster);
      const store = new NodeClaimStore(guest);
      const out = { initialized: [] as string[], gone: [] as string[] };
      for (const name of z.array(z.string()).parse(raw.names)) {
        const claim = await store.get(name);
        if (!claim || claim.metadata.deletionTimestamp !== undefined) out.gone.push(name);
        else if (conditionTrue(claim, 'Initialized')) out.initialized.push(name);
      }
      return out;
    },

    /** A command given up after its nodes were tainted: the taints go, the nodes take pods again. */
    async abandonCommand(raw: { cluster: ClusterRef; command: DisruptionCommand; why: string }): Promise<void> {
      const guest = await forCluster(raw.cluster);
      const command = CommandSchema.parse(raw.command);
      const event = createEventRecorder(guest.core);
      const nodes = new NodeStore(guest);
      for (const c of command.candidates) {
        await nodes.removeTaint(c.node, DISRUPTED_TAINT.key);
        await event({ involvedObject: { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: c.nodeClaim }, type: 'Normal', reason: 'DisruptionBlocked', message: `Disruption abandoned: ${raw.why}` });
      }
    },

    /** The candidates whose NodeClaims still exist. */
    async commandNodesLeft(raw: { cluster: ClusterRef; command: DisruptionCommand }): Promise<string[]> {
      const guest = await forCluster(raw.cluster);
      const command = CommandSchema.parse(raw.command);
      const left: string[] = [];
      for (const c of command.candidates) {
        try {
          await guest.customObjects.getClusterCustomObject({ ...nodeClaimsApi, name: c.nodeClaim });
          left.push(c.nodeClaim);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      return left;
    },
  };
}

export type DisruptionActivities = ReturnType<typeof createDisruptionActivities>;
