// Capacity that already exists or is already on its way: Nodes, and NodeClaims launched
// but not yet registered. Both are bins of fixed size; pods are placed first fit, the
// way Karpenter tries them before opening new claims (existing nodes by name; in-flight
// claims fewest pods first).
import { LabelKey } from '../scheduling/labels';
import { isUnsatisfiable, matches } from '../scheduling/requirement';
import { intersect } from '../scheduling/requirement';
import { compatible, intersectRequirements, parseRequirements, requirementsFromLabels, singleValuedLabels, type Requirements } from '../scheduling/requirements';
import { toleratesAll, type Taint } from '../scheduling/taints';
import type { PodClass } from './classes';
import { topologyOf, universeOf, type SolveContext } from './context';
import { add, addInto, fitsWith, minOf, subtract, type Dims, type Vec } from './dims';
import type { BoundPod, ExistingNodeInput, InFlightClaimInput, PackingInput } from './input';
import { hostPortKey, type Pool } from './pools';
import { tolerationsOf } from './preferences';
import type { Topology } from './topology';

export interface FixedNode {
  readonly kind: 'existing' | 'inFlight';
  readonly name: string;
  readonly hostname: string;
  readonly labels: Readonly<Record<string, string>>;
  /** In-flight claims: what the claim promises; existing nodes: undefined (labels decide). */
  readonly requirements: Requirements | undefined;
  readonly taints: readonly Taint[];
  readonly allocatable: Vec;
  readonly used: Vec;
  readonly ports: Set<string>;
  readonly placed: string[];
  podCount: number;
}

export type Proposal = { readonly ok: true } | { readonly ok: false; readonly reason: string };

function boundUsage(pods: readonly BoundPod[], dims: Dims): { used: Vec; ports: Set<string> } {
  const used = dims.zero();
  const ports = new Set<string>();
  for (const pod of pods) {
    addInto(used, dims.vector({ ...pod.requests, pods: '1' }, 'up'));
    for (const port of pod.hostPorts) ports.add(hostPortKey(port));
  }
  return { used, ports };
}

export function existingNode(input: ExistingNodeInput, dims: Dims): FixedNode {
  const { used, ports } = boundUsage(input.pods, dims);
  return {
    kind: 'existing', name: input.name, hostname: input.labels[LabelKey.hostname] ?? input.name, labels: input.labels,
    requirements: undefined, taints: input.taints, allocatable: dims.vector(input.allocatable, 'down'), used, ports, placed: [], podCount: input.pods.length,
  };
}

/**
 * An in-flight claim's allocatable is known once launched; before that, the claim can be
 * any of its pool's types compatible with its requirements, so only the element-wise
 * minimum of those (after DaemonSets) is safe to promise.
 */
export function inFlightNode(input: InFlightClaimInput, pools: readonly Pool[], dims: Dims): FixedNode {
  const parsed = parseRequirements(input.requirements);
  const requirements = intersectRequirements(parsed.ok ? parsed.requirements : {}, requirementsFromLabels(input.labels));
  const { used, ports } = boundUsage(input.pods, dims);
  let allocatable: Vec;
  if (input.allocatable !== undefined) {
    allocatable = dims.vector(input.allocatable, 'down');
  } else {
    const pool = pools.find((p) => p.name === input.nodePool);
    const candidates = (pool?.types ?? []).filter((t) => Object.values(requirements).every((r) => r.key === LabelKey.zone || r.key === LabelKey.capacityType || !pool?.typeKeys.has(r.key) || matches(r, t.labels[r.key])));
    allocatable = candidates.length === 0 ? dims.zero() : candidates.map((t) => subtract(t.allocatable, t.daemonOverhead)).reduce((a, b) => minOf(a, b));
  }
  return {
    kind: 'inFlight', name: input.name, hostname: input.name, labels: { ...singleValuedLabels(requirements), ...input.labels },
    requirements, taints: input.taints, allocatable, used, ports, placed: [], podCount: input.pods.length,
  };
}

export function domainOfFixed(node: FixedNode, key: string): string | undefined {
  return key === LabelKey.hostname ? node.hostname : node.labels[key];
}

function requirementsAllow(node: FixedNode, podClass: PodClass): Proposal {
  if (node.requirements === undefined) {
    for (const requirement of Object.values(podClass.requirements)) {
      if (!matches(requirement, node.labels[requirement.key])) return { ok: false, reason: `node ${node.name} does not match ${requirement.key}` };
    }
    return { ok: true };
  }
  // A claim not yet launched carries no label it does not promise: every key the pod
  // constrains must be constrained by the claim too (or be satisfied by absence).
  const result = compatible(node.requirements, podClass.requirements, { allowUndefined: new Set() });
  if (!result.ok) return result;
  for (const requirement of Object.values(podClass.requirements)) {
    const promised = node.requirements[requirement.key];
    if (promised !== undefined && isUnsatisfiable(intersect(promised, requirement))) return { ok: false, reason: `claim ${node.name} does not match ${requirement.key}` };
  }
  return { ok: true };
}

/** Whether one pod of this class can join the node: a proposal or a reason, nothing mutated. */
export function canAddToFixed(node: FixedNode, podClass: PodClass, context: SolveContext): Proposal {
  const tolerated = toleratesAll(node.taints, tolerationsOf(podClass.spec));
  if (!tolerated.ok) return tolerated;
  const allowed = requirementsAllow(node, podClass);
  if (!allowed.ok) return allowed;
  if (!fitsWith(node.used, podClass.requests, node.allocatable)) return { ok: false, reason: `node ${node.name} lacks resources` };
  if (podClass.hostPorts.some((port) => node.ports.has(port))) return { ok: false, reason: `node ${node.name} has a host port in use` };
  const topology = topologyOf(context, podClass);
  const violation = context.topology.violation(topology, (key) => domainOfFixed(node, key), (key) => universeOf(context, podClass, key));
  return violation === undefined ? { ok: true } : { ok: false, reason: violation };
}

export function addToFixedMutating(node: FixedNode, podClass: PodClass, podName: string, context: SolveContext): void {
  const sum = add(node.used, podClass.requests);
  node.used.set(sum);
  for (const port of podClass.hostPorts) node.ports.add(port);
  node.placed.push(podName);
  node.podCount += 1;
  const topology = topologyOf(context, podClass);
  context.topology.recordMutating(topology, (key) => domainOfFixed(node, key), (key) => universeOf(context, podClass, key));
}

/**
 * The pods already bound on existing nodes and in-flight claims, counted in `topology`: each
 * matches the spread and affinity groups its labels fall in, and its required anti-affinity
 * still repels pods arriving next to it (symmetry). Its own spread constraints were checked
 * when it was bound.
 */
export function countBoundPods(topology: Topology, input: PackingInput, existing: readonly FixedNode[], inFlight: readonly FixedNode[]): void {
  for (const node of [...input.existingNodes, ...input.inFlightClaims]) {
    for (const pod of node.pods) for (const term of pod.antiAffinity) topology.termGroup('anti', term, pod);
  }
  const byName = new Map([...existing, ...inFlight].map((n) => [`${n.kind}/${n.name}`, n]));
  const count = (kind: FixedNode['kind'], name: string, pods: readonly BoundPod[]): void => {
    const node = byName.get(`${kind}/${name}`);
    if (node === undefined) return;
    for (const pod of pods) {
      const own = pod.antiAffinity.map((term) => ({ group: topology.termGroup('anti', term, pod), selfMatch: false, owns: true }));
      topology.recordMutating({ matching: topology.matchingGroups(pod), own }, (key) => domainOfFixed(node, key), () => []);
    }
  };
  input.existingNodes.forEach((n) => count('existing', n.name, n.pods));
  input.inFlightClaims.forEach((c) => count('inFlight', c.name, c.pods));
}
