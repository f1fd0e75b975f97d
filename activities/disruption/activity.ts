import { PolicyV1Api, type V1Pod, type V1PodDisruptionBudget } from '@kubernetes/client-node';
import { z } from 'zod';
import { normaliseDocument } from '../../core/api/normalise';
import { type NodePool } from '../../core/api/nodepool';
import { StoredNodeClaimSchema, type StoredNodeClaim } from '../../core/api/nodeclaim';
import {
  DO_NOT_DISRUPT,
  consolidatableAt,
  disruptionRound,
  nominationWindowMs,
  stillValid,
  type Blocked,
  type CandidateNode,
  type CandidatePod,
  type DisruptionCommand,
  type RoundInput,
  type RoundPool,
} from '../../core/disruption';
import { ClusterRefSchema, type ClusterRef } from '../../core/lifecycle';
import { fnv1a64 } from '../../core/provisioning/nodeclaims';
import { type LabelSelector } from '../../core/packing/input';
import { selectorMatches } from '../../core/packing/selectors';
import { type ClusterResolver } from '../cluster';
import { type KubeClients } from '../kube/clients';
import { isNotFound } from '../kube/errors';
import { createEventRecorder } from '../kube/events';
import { NodeStore } from '../kube/nodes';

export const DISRUPTED_TAINT = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' } as const;

export interface DisruptionActivityDeps {
  resolve: ClusterResolver;
  now?: () => Date;
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
  considered: Record<string, number>;
  blocked: Blocked[];
  memory: PodEventMemory;
  /** managed nodes seen */
  nodes: number;
}

const ListSchema = z.object({ items: z.array(z.unknown()) });
const nodeClaimsApi = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' } as const;
const conditionTrue = (claim: StoredNodeClaim, type: string) => claim.status?.conditions?.find((c) => c.type === type && c.status === 'True');

function candidatePod(pod: V1Pod, pdbs: readonly V1PodDisruptionBudget[]): CandidatePod {
  const meta = pod.metadata ?? {};
  const labels = meta.labels ?? {};
  const terminal = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  const daemon = (meta.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet');
  const mirror = meta.annotations?.['kubernetes.io/config.mirror'] !== undefined;
  const matching = pdbs.filter((p) => p.metadata?.namespace === meta.namespace && selectorMatches(p.spec?.selector as LabelSelector | undefined, labels));
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
export async function readRound(guest: KubeClients, now: Date, memory: PodEventMemory, batchMaxMs: number): Promise<{ input: RoundInput; memory: PodEventMemory; nodes: number }> {
  const policy = guest.config.makeApiClient(PolicyV1Api);
  const [claimsRaw, nodes, pods, pdbs, poolsRaw] = await Promise.all([
    guest.customObjects.listClusterCustomObject(nodeClaimsApi),
    guest.core.listNode(),
    guest.core.listPodForAllNamespaces(),
    policy.listPodDisruptionBudgetForAllNamespaces(),
    guest.customObjects.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools' }),
  ]);
  const claims = ListSchema.parse(claimsRaw).items.map((c) => StoredNodeClaimSchema.parse(c));
  const nodeByName = new Map(nodes.items.map((n) => [n.metadata?.name ?? '', n]));
  const podsByNode = new Map<string, V1Pod[]>();
  for (const pod of pods.items) {
    const node = pod.spec?.nodeName;
    if (node) podsByNode.set(node, [...(podsByNode.get(node) ?? []), pod]);
  }
  const pools = new Map<string, RoundPool>();
  for (const raw of ListSchema.parse(poolsRaw).items) {
    const normalised = normaliseDocument(raw);
    const pool = normalised.status === 'ok' ? normalised.objects.find((o): o is NodePool => o.kind === 'NodePool') : undefined;
    const name = pool?.metadata.name;
    if (!pool || !name) continue;
    pools.set(name, { name, disruption: pool.spec.disruption, budgets: pool.spec.disruption.budgets, counts: { nodes: 0, disrupting: 0 } });
  }
  const t = now.getTime();
  const nextMemory: PodEventMemory = {};
  const candidates: CandidateNode[] = [];
  for (const claim of claims) {
    const name = claim.metadata.name;
    const poolName = claim.metadata.labels?.['karpenter.sh/nodepool'];
    const nodeName = claim.status?.nodeName;
    const node = nodeName ? nodeByName.get(nodeName) : undefined;
    const initialized = conditionTrue(claim, 'Initialized');
    const deleting = claim.metadata.deletionTimestamp !== undefined || node?.metadata?.deletionTimestamp !== undefined;
    const ready = node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    const pool = poolName ? pools.get(poolName) : undefined;
    if (pool && initialized && !conditionTrue(claim, 'InstanceTerminating')) {
      pool.counts.nodes++;
      if (deleting || !ready) pool.counts.disrupting++;
    }
    const onNode = nodeName ? (podsByNode.get(nodeName) ?? []) : [];
    // the pod set as a hash: the memory rides in the workflow's history every round
    const podsKey = fnv1a64(onNode.filter((p) => p.metadata?.deletionTimestamp === undefined).map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort().join(',')).toString(36);
    const seen = memory[name];
    const initializedAt = initialized?.lastTransitionTime ? Date.parse(String(initialized.lastTransitionTime)) : undefined;
    // a pod set that changed since last round is a pod event now; the first sighting counts from initialization
    nextMemory[name] = seen === undefined ? { pods: podsKey, at: initializedAt ?? t } : seen.pods === podsKey ? seen : { pods: podsKey, at: t };
    candidates.push({
      nodeClaim: name,
      ...(nodeName && node ? { node: nodeName } : {}),
      ...(poolName ? { nodePool: poolName } : {}),
      initialized: initialized !== undefined,
      deleting,
      doNotDisrupt: node?.metadata?.annotations?.[DO_NOT_DISRUPT] === 'true' || claim.metadata.annotations?.[DO_NOT_DISRUPT] === 'true',
      labels: { ...(claim.metadata.labels ?? {}), ...(node?.metadata?.labels ?? {}) },
      ...(claim.spec.terminationGracePeriod ? { terminationGracePeriod: claim.spec.terminationGracePeriod } : {}),
      // the provisioner counts on a node it just saw initialize for pods it nominated
      ...(initializedAt !== undefined ? { nominatedUntil: initializedAt + nominationWindowMs(batchMaxMs) } : {}),
      ...(() => {
        const at = pool ? consolidatableAt({ ...(initializedAt !== undefined ? { initializedAt } : {}), lastPodEventAt: nextMemory[name]!.at, consolidateAfter: pool.disruption.consolidateAfter }) : undefined;
        return at !== undefined ? { consolidatableAt: at } : {};
      })(),
      pods: onNode.map((p) => candidatePod(p, pdbs.items)),
    });
  }
  return { input: { now: t, nodes: candidates, pools }, memory: nextMemory, nodes: candidates.length };
}

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
  return {
    async planRound(raw: PlanRoundInput): Promise<PlanRoundResult> {
      const guest = await forCluster(raw.cluster);
      const read = await readRound(guest, now(), raw.memory ?? {}, raw.batchMaxMs ?? 10_000);
      const round = disruptionRound(read.input);
      // an admin who set do-not-disrupt, a PDB or a budget hears why the node stays
      const event = createEventRecorder(guest.core);
      for (const b of round.blocked) {
        await event({ involvedObject: { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: b.nodeClaim }, type: 'Normal', reason: 'DisruptionBlocked', message: `Cannot disrupt NodeClaim: ${b.reason}` });
      }
      return { ...(round.command ? { command: round.command } : {}), considered: round.considered, blocked: round.blocked, memory: read.memory, nodes: read.nodes };
    },

    async validateCommand(raw: { cluster: ClusterRef; command: DisruptionCommand; memory?: PodEventMemory; batchMaxMs?: number }): Promise<{ ok: true } | { ok: false; reason: string }> {
      const guest = await forCluster(raw.cluster);
      const command = CommandSchema.parse(raw.command);
      const read = await readRound(guest, now(), raw.memory ?? {}, raw.batchMaxMs ?? 10_000);
      return stillValid(command, read.input);
    },

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
      for (const c of command.candidates) {
        await guest.customObjects.deleteClusterCustomObject({ ...nodeClaimsApi, name: c.nodeClaim }).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
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
