// Realisability: does kube-scheduler, given exactly the nodes a plan launches, bind every
// pod the plan placed? A plan is only useful if the real scheduler can follow it, and
// kube-scheduler binds pods one at a time, first come first served, re-evaluating
// topology spread and pod (anti-)affinity at each bind (issue 14, finding 2).
//
// On the stack's guest API server: one Node per planned NodeClaim (kwok keeps it Ready;
// labels and allocatable from the plan), then the planned pods are created one by one in
// input order with no nodeName and no nomination, and kube-scheduler binds them — to any
// of those nodes (`free`), or only to the one the plan chose (`planned`, see Placement).
// When nothing moves any more, the pods still Pending are reported with the scheduler's
// reasons.
//
// Isolation (test files share one stack): every Node carries a label and a NoSchedule
// taint unique to the run; every pod selects that label and tolerates that taint, so
// only this run's nodes are eligible (and, with nodeAffinityPolicy Honor, only they are
// spread domains); pods live in namespaces unique to the run, so selectors count only
// them. The plan's own pods never carry either, so neither changes what the plan meant.
// Only new nodes are modelled: no existing nodes, in-flight claims or DaemonSets.
import { PatchStrategy, setHeaderOptions, type V1Affinity, type V1Node, type V1Pod, type V1PodAffinityTerm } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import type { KubeClients } from '../../activities/kube/clients';
import type { BaselinePlan } from '../../core/packing/baseline/karpenter-loop';
import type { BoundPod, ExistingNodeInput, PackingInput, PendingPod, PodAffinityTerm, RequirementInput } from '../../core/packing';
import type { Plan } from '../../core/packing/plan';
import { batchGateNeeded } from '../../core/provisioning/batch-gate';
import { taintSchema, type Taint } from '../../core/scheduling/taints';
import { eventually } from './eventually';

export const REALISE_LABEL = 'autonode.test/realise';
const KWOK_ANNOTATION = { 'kwok.x-k8s.io/node': 'fake' };

/** One node as a plan would launch it. */
export interface PlannedNode {
  /** Unique in the plan (the NodeClaim's name); the Node gets a run-unique name. */
  readonly claim: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly allocatable: Readonly<Record<string, string>>;
  /** Pod keys (`namespace/name`) the plan put here. */
  readonly pods: readonly string[];
}

export function nodesOfPlan(plan: Plan): PlannedNode[] {
  if (plan.existingNodes.length > 0 || plan.inFlightNodeClaims.length > 0) {
    throw new Error('the realisability harness launches new nodes only; this plan places pods on existing or in-flight capacity');
  }
  return newNodesOf(plan);
}

/** A plan's new claims as nodes, whatever it put on existing capacity (a follow-up round's plan). */
export function newNodesOf(plan: Plan): PlannedNode[] {
  return plan.nodeClaims.map((claim) => ({ claim: claim.name, labels: claim.labels, taints: claim.taints, allocatable: claim.allocatable, pods: claim.pods }));
}

/** The Karpenter-loop baseline's claims as nodes: labels and allocatable of the launched type. */
export function nodesOfBaseline(plan: BaselinePlan, input: PackingInput): PlannedNode[] {
  return plan.nodeClaims.map((claim, i) => {
    const pool = input.nodePools.find((p) => p.name === claim.nodePool);
    const type = pool?.instanceTypes.find((t) => t.name === claim.instanceType);
    if (pool === undefined || type === undefined) throw new Error(`baseline claim ${i}: ${claim.nodePool}/${claim.instanceType} is not in the input`);
    return {
      claim: `baseline-${i}`,
      labels: {
        ...type.labels, ...pool.labels,
        'topology.kubernetes.io/zone': claim.zone, 'karpenter.sh/capacity-type': claim.capacityType, 'karpenter.sh/nodepool': pool.name,
      },
      taints: pool.taints,
      allocatable: type.allocatable,
      pods: claim.pods,
    };
  });
}

export interface PendingReport {
  readonly pod: string;
  /** The PodScheduled condition's message (kube-scheduler's FailedScheduling summary). */
  readonly message: string;
}

export interface Realisation {
  readonly nodes: number;
  /** Pods the plan placed, all created. */
  readonly pods: number;
  readonly bound: number;
  readonly pending: readonly PendingReport[];
  /**
   * Pending pods that some node with room refused for a spread or pod (anti-)affinity rule
   * (kube-scheduler names the first filter each node failed, resources before topology).
   */
  readonly pendingForTopology: readonly PendingReport[];
  /** Per scheduler reason ("didn't match pod topology spread constraints", …): pending pods citing it. */
  readonly reasons: Readonly<Record<string, number>>;
  /** Bound pods whose node is not the one the plan chose (the scheduler is free to). */
  readonly elsewhere: number;
  /** Pods still carrying a nominatedNodeName at the end (kube-scheduler clears one on a failed attempt). */
  readonly nominatedAtEnd: number;
  /** With `nominate`: the pods whose nomination kube-scheduler had cleared by the end. */
  readonly withoutNomination: readonly string[];
  /** Pending once kube-scheduler settled on the plan's own nodes, before any follow-up round. */
  readonly pendingFirst: readonly PendingReport[];
  /** With `followUp`: each round the provisioner ran for the pods still Pending. */
  readonly rounds: readonly FollowUpRound[];
  readonly seconds: number;
}

/** One follow-up round: the provisioner's next batch, planned for the pods still Pending. */
export interface FollowUpRound {
  /** Pods Pending when the round was planned. */
  readonly pending: number;
  /** New nodes the round launched, and their price ($/h). */
  readonly nodes: number;
  readonly price: number;
  /** Pending pods the round's plan put on nodes that already exist (left to kube-scheduler). */
  readonly onExisting: number;
}

/** What a follow-up round's planner returns (the bench passes `solve`). */
export interface FollowUpPlan {
  readonly nodes: readonly PlannedNode[];
  readonly price: number;
  readonly onExisting: number;
}

/**
 * `free`: kube-scheduler may bind a pod to any of the plan's nodes (the real situation: it
 * knows nothing of the plan). `planned`: each node also carries a taint only its planned
 * pods tolerate, so kube-scheduler can follow the plan and nothing else; the nodes stay
 * spread domains for every pod (nodeTaintsPolicy Ignore, the default), so a pod still Pending
 * was refused by a spread or pod (anti-)affinity rule the plan believed satisfied — in the
 * order the pods arrived.
 */
export type Placement = 'free' | 'planned';

/**
 * How the pods meet the nodes.
 * - `nodes-first`: the nodes exist and are Ready before the first pod arrives.
 * - `pods-first`: the product's order. The pods arrive first and go Pending; the nodes
 *   come up behind a gate taint no pod tolerates (standing in for `karpenter.sh/unregistered`,
 *   the last gate autonode lifts itself), then the gates are lifted node by node in plan
 *   order — each node's planned pods nominated to it first when `nominate` is set.
 */
export type Arrival = 'nodes-first' | 'pods-first';

export interface RealiseOptions {
  readonly placement?: Placement;
  readonly arrival?: Arrival;
  /**
   * Set each planned pod's `status.nominatedNodeName` to its planned node before that
   * node's gate is lifted (pods-first only), as autonode does at registration.
   */
  readonly nominate?: boolean;
  /**
   * With `nominate`: `each-gate` nominates a node's pods just before its gate lifts (at
   * registration); `before-gates` nominates every pod before the first gate lifts (as soon
   * as each instance launched and its node name is known).
   */
  readonly nominateAt?: 'each-gate' | 'before-gates';
  /**
   * With `nominate`: leave pods that own a DoNotSchedule spread on a key other than hostname
   * un-nominated. kube-scheduler counts a node's other nominees in that node's zone only,
   * so such a pod can refuse its own nominated node early in the arrival and lose the nomination.
   */
  readonly nominateZoneSpread?: boolean;
  /**
   * With `nominate`: once every gate is lifted, nominate again every planned pod still
   * Pending whose nomination kube-scheduler cleared (it clears one on each failed attempt),
   * this many rounds `quietMs` apart.
   */
  readonly renominateRounds?: number;
  /**
   * pods-first: the order the gates lift. `plan` (default): the plan's order, which may bring
   * one zone's nodes up long after the others' (autonode's karpenter-exact plan: its first
   * test-zone-3 node is the 24th of 66), so every zone spread's minimum stays 0 meanwhile.
   * `zones-round-robin`: one node of each zone in turn, each zone's in plan order — closer to
   * a batch whose instances launch together and register within seconds of each other.
   * `together`: the batch gate (core/provisioning/batch-gate.ts) — every node's pods
   * nominated first, then all gates lifted at once (as fast as the API server takes the
   * patches), so no pod is tried while its own node is still gated.
   * `product`: what autonode does with each batch (the first plan, then each follow-up
   * round's): `together` when `batchGateNeeded` says the batch's nodes open together (its
   * plan has topology rules), `plan` otherwise.
   */
  readonly gateOrder?: 'plan' | 'zones-round-robin' | 'together' | 'product';
  /**
   * What the product does next: once kube-scheduler settles, the pods still Pending go to the
   * provisioner's next batch. `plan` is called with them as the pending pods and the run's
   * nodes (with the pods bound there) as existing nodes; its new nodes come up as the first
   * ones did (behind gates with nominations in `pods-first`), and so on for up to `rounds`
   * rounds, or until nothing is Pending or a round launches nothing.
   */
  readonly followUp?: { readonly rounds: number; readonly plan: (input: PackingInput) => FollowUpPlan };
  /** Stop once no pod changed state for this long (all pods bound or Unschedulable). */
  readonly quietMs?: number;
  readonly timeoutMs?: number;
}

/**
 * Creates the plan's nodes, then its pods in input order, lets kube-scheduler bind them,
 * and reports what stayed Pending. Removes everything it created, also on failure.
 */
export async function realise(kube: KubeClients, input: PackingInput, planned: readonly PlannedNode[], options: RealiseOptions = {}): Promise<Realisation> {
  if (input.existingNodes.length > 0 || input.inFlightClaims.length > 0 || input.daemonSets.length > 0) {
    throw new Error('the realisability harness models neither existing nodes, in-flight claims nor DaemonSets');
  }
  const started = Date.now();
  const run = `rl-${randomUUID().slice(0, 8)}`;
  const namespaces = new Map([...new Set(input.pods.map((p) => p.namespace))].sort().map((ns, i) => [ns, `${run}-${i}`]));
  const nodeName = new Map(planned.map((node, i) => [node.claim, `${run}-${String(i).padStart(4, '0')}`]));
  const plannedOn = new Map(planned.flatMap((node) => node.pods.map((pod) => [pod, nodeName.get(node.claim) ?? ''])));
  const pods = input.pods.filter((pod) => plannedOn.has(`${pod.namespace}/${pod.name}`));
  const original = new Map([...namespaces].map(([from, to]) => [to, from]));
  let result: Realisation;
  try {
    for (const name of namespaces.values()) await kube.core.createNamespace({ body: { metadata: { name, labels: { [REALISE_LABEL]: run } } } });
    const placement = options.placement ?? 'free';
    const gated = (options.arrival ?? 'nodes-first') === 'pods-first';
    if (options.nominate === true && !gated) throw new Error('realise: `nominate` needs arrival `pods-first` (a nomination is set on a Pending pod)');
    const byKey = new Map(pods.map((pod) => [`${pod.namespace}/${pod.name}`, pod]));
    const ownsZoneSpread = (key: string) => (byKey.get(key)?.topologySpread ?? []).some((c) => c.whenUnsatisfiable === 'DoNotSchedule' && c.topologyKey !== 'kubernetes.io/hostname');
    const nominees = (node: PlannedNode) => (options.nominateZoneSpread === false ? node.pods.filter((key) => !ownsZoneSpread(key)) : node.pods);
    const nominateNode = (node: PlannedNode) => inBatches(nominees(node), 16, async (key) => {
      const [namespace = '', podName = ''] = key.split('/');
      await kube.core.patchNamespacedPodStatus({ name: podName, namespace: namespaces.get(namespace) ?? '', body: { status: { nominatedNodeName: nodeName.get(node.claim) ?? '' } } }, mergePatch);
    });
    const createNodes = async (nodes: readonly PlannedNode[]): Promise<void> => {
      await inBatches(nodes, 8, (node) => kube.core.createNode({ body: nodeObject(node, { name: nodeName.get(node.claim) ?? '', run, placement, gated }) }));
      await eventually(`${nodeName.size} realisability nodes Ready and untainted`, async () => {
        const all = await kube.core.listNode({ labelSelector: `${REALISE_LABEL}=${run}` });
        return all.items.length === nodeName.size && all.items.every(ready);
      }, 60_000);
    };
    /** pods-first: the gates lift in order, each node's pods nominated first (`nominate`). */
    const liftGates = async (nodes: readonly PlannedNode[], nominateFirst: boolean): Promise<void> => {
      const lift = async (name: string): Promise<void> => {
        const current = await kube.core.readNode({ name });
        await kube.core.patchNode({ name, body: { spec: { taints: (current.spec?.taints ?? []).filter((t) => t.key !== GATE_TAINT) } } }, mergePatch);
      };
      const together = options.gateOrder === 'together'
        || (options.gateOrder === 'product' && batchGateNeeded(nodes.map((node) => ({ pods: node.pods })), input.pods));
      if (together) {
        if (nominateFirst) for (const node of nodes) await nominateNode(node);
        // as the product does: every cordon lifted in one burst
        await Promise.all(nodes.map((node) => lift(nodeName.get(node.claim) ?? '')));
        return;
      }
      for (const node of options.gateOrder === 'zones-round-robin' ? zonesRoundRobin(nodes) : nodes) {
        const name = nodeName.get(node.claim) ?? '';
        if (nominateFirst) await nominateNode(node);
        await lift(name);
      }
    };

    await createNodes(planned);
    // In input order, one at a time: the order kube-scheduler sees them arrive.
    for (const pod of pods) {
      const only = placement === 'planned' ? plannedOn.get(`${pod.namespace}/${pod.name}`) : undefined;
      await kube.core.createNamespacedPod({ namespace: namespaces.get(pod.namespace) ?? '', body: podObject(pod, { run, namespaces, only }) });
    }
    if (gated) {
      await eventually(`${pods.length} pods Unschedulable behind the gate taints`, async () => {
        const all = await listPods(kube, [...namespaces.values()]);
        return all.length === pods.length && all.every(unschedulable);
      }, options.timeoutMs ?? 180_000);
      const early = options.nominate === true && options.nominateAt === 'before-gates';
      if (early) for (const node of planned) await nominateNode(node);
      await liftGates(planned, options.nominate === true && !early);
      for (let round = 0; options.nominate === true && round < (options.renominateRounds ?? 0); round++) {
        await new Promise((resolve) => setTimeout(resolve, options.quietMs ?? 5_000));
        const lost = (await listPods(kube, [...namespaces.values()])).filter((pod) => pod.spec?.nodeName === undefined && (pod.status?.nominatedNodeName ?? '') === '');
        for (const pod of lost) {
          const key = inputKey(pod, original);
          const target = plannedOn.get(key);
          if (target === undefined) continue;
          await kube.core.patchNamespacedPodStatus({ name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', body: { status: { nominatedNodeName: target } } }, mergePatch);
        }
      }
    }
    let final = await quiescent(kube, [...namespaces.values()], pods.length, options);
    const pendingFirst = pendingOf(final, original);
    const rounds: FollowUpRound[] = [];
    for (let round = 1; options.followUp !== undefined && round <= options.followUp.rounds; round++) {
      const still = final.filter((pod) => pod.spec?.nodeName === undefined).length;
      if (still === 0) break;
      const current = (await kube.core.listNode({ labelSelector: `${REALISE_LABEL}=${run}` })).items;
      const next = options.followUp.plan(followUpInput(input, current, final, { original, byKey }));
      rounds.push({ pending: still, nodes: next.nodes.length, price: next.price, onExisting: next.onExisting });
      if (next.nodes.length === 0) break;
      const added = next.nodes.map((node) => ({ ...node, claim: `round-${round}/${node.claim}` }));
      added.forEach((node, i) => {
        nodeName.set(node.claim, `${run}-r${round}-${String(i).padStart(4, '0')}`);
        for (const key of node.pods) plannedOn.set(key, nodeName.get(node.claim) ?? '');
      });
      await createNodes(added);
      if (gated) await liftGates(added, options.nominate === true);
      final = await quiescent(kube, [...namespaces.values()], pods.length, options);
    }
    const nominatedAtEnd = final.filter((pod) => (pod.status?.nominatedNodeName ?? '') !== '').length;
    const withoutNomination = options.nominate === true
      ? final.filter((pod) => (pod.status?.nominatedNodeName ?? '') === '').map((pod) => inputKey(pod, original)).sort()
      : [];
    const pending = pendingOf(final, original);
    const elsewhere = final.filter((pod) => pod.spec?.nodeName !== undefined
      && pod.spec.nodeName !== plannedOn.get(inputKey(pod, original))).length;
    result = {
      nodes: planned.length, pods: pods.length, bound: pods.length - pending.length, pending,
      pendingForTopology: pending.filter((p) => Object.keys(countReasons([p])).some(isTopologyReason)),
      reasons: countReasons(pending), elsewhere, nominatedAtEnd, withoutNomination, pendingFirst, rounds, seconds: (Date.now() - started) / 1000,
    };
  } catch (err) {
    await cleanUp(kube, run, [...namespaces.values()]).catch((cleanupError: unknown) => {
      throw new AggregateError([err, cleanupError], `realisability run ${run} failed and so did its clean-up`);
    });
    throw err;
  }
  await cleanUp(kube, run, [...namespaces.values()]);
  return result;
}

/** One node of each zone in turn (zones in order of their first node), each zone's nodes in plan order. */
export function zonesRoundRobin(planned: readonly PlannedNode[]): PlannedNode[] {
  const byZone = new Map<string, PlannedNode[]>();
  for (const node of planned) {
    const zone = node.labels['topology.kubernetes.io/zone'] ?? '';
    byZone.set(zone, [...(byZone.get(zone) ?? []), node]);
  }
  const queues = [...byZone.values()];
  const ordered: PlannedNode[] = [];
  for (let i = 0; ordered.length < planned.length; i++) for (const queue of queues) if (queue[i] !== undefined) ordered.push(queue[i] as PlannedNode);
  return ordered;
}

/**
 * The provisioner's view after kube-scheduler settled: the pods still Pending, and the run's
 * nodes as existing nodes with the pods bound there (their own labels, requests and required
 * anti-affinity, in their original namespaces). The run's isolation label and taint and the
 * gate are the harness's, not the plan's, so they are left out.
 */
export function followUpInput(input: PackingInput, nodes: readonly V1Node[], pods: readonly V1Pod[], names: { original: ReadonlyMap<string, string>; byKey: ReadonlyMap<string, PendingPod> }): PackingInput {
  const pending: PendingPod[] = [];
  const boundTo = new Map<string, BoundPod[]>();
  for (const pod of pods) {
    const key = inputKey(pod, names.original);
    const spec = names.byKey.get(key);
    if (spec === undefined) throw new Error(`follow-up: pod ${key} is not in the input`);
    const node = pod.spec?.nodeName;
    if (node === undefined) {
      pending.push(spec);
      continue;
    }
    const bound: BoundPod = { namespace: spec.namespace, name: spec.name, labels: spec.labels, requests: spec.requests, hostPorts: spec.hostPorts, antiAffinity: spec.podAntiAffinity.required };
    boundTo.set(node, [...(boundTo.get(node) ?? []), bound]);
  }
  const order = new Map(input.pods.map((pod, i) => [`${pod.namespace}/${pod.name}`, i]));
  pending.sort((a, b) => (order.get(`${a.namespace}/${a.name}`) ?? 0) - (order.get(`${b.namespace}/${b.name}`) ?? 0));
  const existingNodes: ExistingNodeInput[] = nodes.map((node) => {
    const name = node.metadata?.name ?? '';
    const { [REALISE_LABEL]: _run, ...labels } = node.metadata?.labels ?? {};
    return {
      name, labels,
      taints: (node.spec?.taints ?? []).filter((t) => t.key !== REALISE_LABEL && t.key !== GATE_TAINT && t.key !== PLANNED_TAINT)
        .map((t) => taintSchema.parse({ key: t.key, value: t.value ?? '', effect: t.effect })),
      allocatable: { ...(node.status?.allocatable ?? {}) },
      pods: boundTo.get(name) ?? [],
    };
  });
  return { ...input, pods: pending, existingNodes };
}

/** kube-scheduler's filter messages for topology spread and inter-pod (anti-)affinity. */
export function isTopologyReason(reason: string): boolean {
  return /topology spread constraints|pod affinity rules|pod anti-affinity rules|existing pods anti-affinity rules/.test(reason);
}

const PLANNED_TAINT = 'autonode.test/planned-for';
const GATE_TAINT = 'autonode.test/gate';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function nodeObject(node: PlannedNode, context: { name: string; run: string; placement: Placement; gated: boolean }): V1Node {
  const { name, run, placement, gated } = context;
  const own = [
    ...(placement === 'planned' ? [{ key: PLANNED_TAINT, value: name, effect: 'NoSchedule' }] : []),
    ...(gated ? [{ key: GATE_TAINT, value: run, effect: 'NoSchedule' }] : []),
  ];
  return {
    metadata: {
      name,
      labels: { ...node.labels, 'kubernetes.io/hostname': name, [REALISE_LABEL]: run },
      annotations: { ...KWOK_ANNOTATION },
    },
    spec: { taints: [...node.taints.map((t) => ({ ...t })), { key: REALISE_LABEL, value: run, effect: 'NoSchedule' }, ...own] },
    status: { capacity: { ...node.allocatable }, allocatable: { ...node.allocatable } },
  };
}

function ready(node: V1Node): boolean {
  const isReady = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  // node.kubernetes.io/not-ready (added at creation) is lifted once the controller sees Ready.
  return isReady && !(node.spec?.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/'));
}

function requirementsOf(requirements: readonly RequirementInput[]): { key: string; operator: string; values?: string[] }[] {
  return requirements.map((r) => ({ key: r.key, operator: r.operator, ...(r.values === undefined ? {} : { values: [...r.values] }) }));
}

/** `only`: the node whose planned-for taint the pod tolerates (placement `planned`). */
function podObject(pod: PendingPod, context: { run: string; namespaces: ReadonlyMap<string, string>; only: string | undefined }): V1Pod {
  const { run, namespaces, only } = context;
  const term = (t: PodAffinityTerm): V1PodAffinityTerm => ({
    topologyKey: t.topologyKey,
    ...(t.labelSelector === undefined ? {} : { labelSelector: t.labelSelector }),
    // Named namespaces map to this run's; "all namespaces" becomes all of this run's.
    ...(t.namespaces === undefined ? {} : { namespaces: t.namespaces.map((ns) => namespaces.get(ns) ?? `${run}-absent`) }),
    ...(t.namespaceSelector === undefined ? {} : { namespaceSelector: { matchLabels: { [REALISE_LABEL]: run } } }),
  });
  const affinity: V1Affinity = {
    ...(pod.requiredNodeAffinity.length === 0 && pod.preferredNodeAffinity.length === 0 ? {} : {
      nodeAffinity: {
        ...(pod.requiredNodeAffinity.length === 0 ? {} : { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: pod.requiredNodeAffinity.map((t) => ({ matchExpressions: requirementsOf(t) })) } }),
        preferredDuringSchedulingIgnoredDuringExecution: pod.preferredNodeAffinity.map((p) => ({ weight: p.weight, preference: { matchExpressions: requirementsOf(p.requirements) } })),
      },
    }),
    podAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: pod.podAffinity.required.map(term),
      preferredDuringSchedulingIgnoredDuringExecution: pod.podAffinity.preferred.map((p) => ({ weight: p.weight, podAffinityTerm: term(p.podAffinityTerm) })),
    },
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: pod.podAntiAffinity.required.map(term),
      preferredDuringSchedulingIgnoredDuringExecution: pod.podAntiAffinity.preferred.map((p) => ({ weight: p.weight, podAffinityTerm: term(p.podAffinityTerm) })),
    },
  };
  const requests = Object.fromEntries(Object.entries(pod.requests).filter(([name]) => name !== 'pods'));
  return {
    metadata: { name: pod.name, labels: { ...pod.labels } },
    spec: {
      containers: [{
        name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { requests },
        ports: pod.hostPorts.map((p) => ({ containerPort: p.port, hostPort: p.port, protocol: p.protocol, ...(p.hostIP === '' ? {} : { hostIP: p.hostIP }) })),
      }],
      nodeSelector: { ...pod.nodeSelector, [REALISE_LABEL]: run },
      affinity,
      tolerations: [
        ...pod.tolerations.map((t) => ({ ...t })),
        { key: REALISE_LABEL, operator: 'Equal', value: run, effect: 'NoSchedule' },
        ...(only === undefined ? [] : [{ key: PLANNED_TAINT, operator: 'Equal', value: only, effect: 'NoSchedule' }]),
      ],
      topologySpreadConstraints: pod.topologySpread.map((c) => ({ ...c })),
      terminationGracePeriodSeconds: 0,
    },
  };
}

async function listPods(kube: KubeClients, namespaces: readonly string[]): Promise<V1Pod[]> {
  return (await Promise.all(namespaces.map((namespace) => kube.core.listNamespacedPod({ namespace })))).flatMap((list) => list.items);
}

function unschedulable(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable') === true;
}

/** A run's pod by its input key (`namespace/name` in the input's namespaces). */
function inputKey(pod: V1Pod, original: ReadonlyMap<string, string>): string {
  return `${original.get(pod.metadata?.namespace ?? '') ?? '?'}/${pod.metadata?.name ?? '?'}`;
}

/** The pods not bound, by their input key, with kube-scheduler's last message; sorted. */
function pendingOf(pods: readonly V1Pod[], original: ReadonlyMap<string, string>): PendingReport[] {
  return pods.filter((pod) => pod.spec?.nodeName === undefined).map((pod) => ({
    pod: inputKey(pod, original),
    message: pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message ?? '(no PodScheduled condition)',
  })).sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0));
}

/** Every pod bound or Unschedulable, and nothing changed for `quietMs`. */
async function quiescent(kube: KubeClients, namespaces: readonly string[], expected: number, options: RealiseOptions): Promise<V1Pod[]> {
  const quietMs = options.quietMs ?? 5_000;
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  let last = '';
  let since = Date.now();
  for (;;) {
    const pods = await listPods(kube, namespaces);
    const settled = pods.length === expected && pods.every((pod) => pod.spec?.nodeName !== undefined || unschedulable(pod));
    const state = pods.map((pod) => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}=${pod.spec?.nodeName ?? '-'}`).sort().join(',');
    if (state !== last || !settled) {
      last = state;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) {
      return pods;
    }
    if (Date.now() > deadline) {
      const bound = pods.filter((pod) => pod.spec?.nodeName !== undefined).length;
      throw new Error(`kube-scheduler did not settle: ${bound} of ${expected} pods bound, ${pods.length} created`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * Reasons per pending pod, from kube-scheduler's summary ("0/12 nodes are available: 3
 * node(s) didn't match pod topology spread constraints, 9 Insufficient cpu. no new claims
 * to deallocate, preemption: 0/12 nodes are available: …"): the first sentence only.
 */
export function countReasons(pending: readonly PendingReport[]): Record<string, number> {
  const reasons: Record<string, number> = {};
  for (const { message } of pending) {
    const filters = /^0\/\d+ nodes are available: (.*?)\.(?: |$)/.exec(message)?.[1] ?? message;
    const seen = new Set(filters.split(/, (?=\d)/).map((part) => part.replace(/^\d+ /, '').trim()).filter((part) => part !== ''));
    for (const reason of seen) reasons[reason] = (reasons[reason] ?? 0) + 1;
  }
  return reasons;
}

async function inBatches<T>(items: readonly T[], size: number, each: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}

async function cleanUp(kube: KubeClients, run: string, namespaces: readonly string[]): Promise<void> {
  // Pods first, without grace (kwok would otherwise play each one's termination), then
  // their namespaces and the nodes. Errors are collected so one failure cleans up the rest.
  const failures: unknown[] = [];
  const attempt = async (work: () => Promise<unknown>): Promise<void> => {
    try {
      await work();
    } catch (err) {
      failures.push(err);
    }
  };
  for (const namespace of namespaces) {
    await attempt(() => kube.core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }));
    await attempt(() => kube.core.deleteNamespace({ name: namespace }));
  }
  await attempt(() => kube.core.deleteCollectionNode({ labelSelector: `${REALISE_LABEL}=${run}` }));
  if (failures.length > 0) throw new Error(`realisability clean-up of ${run} failed: ${failures.map(String).join('; ')}`);
}

