// An independent checker of plans. It shares no code with the solver or core/scheduling:
// its own quantity parsing, label matching, toleration logic, resource sums and spread
// counting, written from the Kubernetes documentation, so a bug in the solver's helpers
// cannot hide itself. Only the input/plan *types* are imported (types are erased).
import type { PackingInput, PendingPod, Plan } from '../../../core/packing';

type Labels = Record<string, string>;

const binary: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };
const decimal: Record<string, number> = { m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };

/** Parses a quantity into a float of base units (enough for checking with a small epsilon). */
export function quantityValue(text: string): number {
  const match = /^([0-9.]+)([a-zA-Z]*)$/.exec(text.trim());
  if (match === null) throw new Error(`checker: bad quantity ${text}`);
  const number = Number(match[1]);
  const suffix = match[2] ?? '';
  const factor = binary[suffix] ?? decimal[suffix];
  if (factor === undefined) throw new Error(`checker: unknown suffix ${suffix}`);
  return number * factor;
}

function sumInto(total: Record<string, number>, list: Record<string, string>): void {
  for (const [name, value] of Object.entries(list)) total[name] = (total[name] ?? 0) + quantityValue(value);
}

const aliases: Record<string, string> = {
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
};
const canonical = (key: string): string => aliases[key] ?? key;

function expressionHolds(expression: { key: string; operator: string; values?: string[] | undefined }, labels: Labels): boolean {
  const value = labels[canonical(expression.key)];
  const values = expression.values ?? [];
  switch (expression.operator) {
    case 'In': return value !== undefined && values.includes(value);
    case 'NotIn': return value === undefined || !values.includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    case 'Gt': return value !== undefined && /^-?[0-9]+$/.test(value) && Number(value) > Number(values[0]);
    case 'Lt': return value !== undefined && /^-?[0-9]+$/.test(value) && Number(value) < Number(values[0]);
    case 'Gte': return value !== undefined && /^-?[0-9]+$/.test(value) && Number(value) >= Number(values[0]);
    case 'Lte': return value !== undefined && /^-?[0-9]+$/.test(value) && Number(value) <= Number(values[0]);
    default: throw new Error(`checker: operator ${expression.operator}`);
  }
}

/** nodeSelector and required node affinity (any term) against a node's labels. */
export function nodeMatches(pod: PendingPod, labels: Labels): boolean {
  for (const [key, value] of Object.entries(pod.nodeSelector)) if (labels[canonical(key)] !== value) return false;
  if (pod.requiredNodeAffinity.length === 0) return true;
  return pod.requiredNodeAffinity.some((term) => term.every((e) => expressionHolds(e, labels)));
}

function tolerates(pod: { tolerations: PendingPod['tolerations'] }, taint: { key: string; value?: string | undefined; effect: string }): boolean {
  return pod.tolerations.some((t) => {
    if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false;
    if (t.key !== undefined && t.key !== '' && t.key !== taint.key) return false;
    if (t.operator === 'Exists') return true;
    return (t.value ?? '') === (taint.value ?? '');
  });
}

function selects(selector: { matchLabels?: Labels | undefined; matchExpressions?: { key: string; operator: string; values?: string[] | undefined }[] | undefined } | undefined, labels: Labels): boolean {
  if (selector === undefined) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  return (selector.matchExpressions ?? []).every((e) => {
    const value = labels[e.key];
    switch (e.operator) {
      case 'In': return value !== undefined && (e.values ?? []).includes(value);
      case 'NotIn': return value === undefined || !(e.values ?? []).includes(value);
      case 'Exists': return value !== undefined;
      case 'DoesNotExist': return value === undefined;
      default: throw new Error(`checker: selector operator ${e.operator}`);
    }
  });
}

interface Host {
  name: string;
  labels: Labels;
  allocatable: Record<string, number>;
  used: Record<string, number>;
  pods: PendingPod[];
  ports: string[];
}

/** Every violation found; empty when the plan is valid for the input. */
export function checkPlan(input: PackingInput, plan: Plan): string[] {
  const problems: string[] = [];
  const byKey = new Map(input.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  const seen = new Map<string, number>();
  const note = (pod: string): void => { seen.set(pod, (seen.get(pod) ?? 0) + 1); };
  plan.nodeClaims.forEach((c) => c.pods.forEach(note));
  plan.existingNodes.forEach((n) => n.pods.forEach(note));
  plan.inFlightNodeClaims.forEach((n) => n.pods.forEach(note));
  plan.unschedulable.forEach((u) => {
    note(u.pod);
    if (u.reason.trim() === '') problems.push(`${u.pod}: unschedulable without a reason`);
  });
  for (const key of byKey.keys()) if (seen.get(key) !== 1) problems.push(`${key} appears ${seen.get(key) ?? 0} times in the plan`);
  for (const key of seen.keys()) if (!byKey.has(key)) problems.push(`${key} is not a pending pod`);

  const hosts: Host[] = [];
  const podsOf = (names: string[]): PendingPod[] => names.flatMap((n) => byKey.get(n) ?? []);

  for (const claim of plan.nodeClaims) {
    const pool = input.nodePools.find((p) => p.name === claim.nodePool);
    const type = pool?.instanceTypes.find((t) => t.name === claim.instanceType);
    if (pool === undefined || type === undefined) {
      problems.push(`${claim.name}: ${claim.nodePool}/${claim.instanceType} does not exist`);
      continue;
    }
    const offering = type.offerings.find((o) => o.zone === claim.zone && o.capacityType === claim.capacityType);
    if (offering === undefined || !offering.available) problems.push(`${claim.name}: offering ${claim.zone}/${claim.capacityType} is not available`);
    else if (Math.abs(offering.price - claim.price) > 1e-9) problems.push(`${claim.name}: price ${claim.price} is not the offering's ${offering.price}`);
    const labels: Labels = { ...type.labels, ...pool.labels, 'topology.kubernetes.io/zone': claim.zone, 'karpenter.sh/capacity-type': claim.capacityType, 'karpenter.sh/nodepool': pool.name, 'kubernetes.io/hostname': claim.name };
    for (const requirement of pool.requirements) {
      if (!expressionHolds(requirement, labels) && labels[canonical(requirement.key)] !== undefined) problems.push(`${claim.name}: violates its pool requirement ${requirement.key} ${requirement.operator}`);
    }
    const allocatable: Record<string, number> = {};
    sumInto(allocatable, type.allocatable);
    const used: Record<string, number> = {};
    const ports: string[] = [];
    for (const daemon of input.daemonSets) {
      const runs = pool.taints.every((t) => tolerates(daemon, t))
        && Object.entries(daemon.nodeSelector).every(([k, v]) => labels[canonical(k)] === v)
        && (daemon.requiredNodeAffinity.length === 0 || daemon.requiredNodeAffinity.some((term) => term.every((e) => expressionHolds(e, labels))));
      if (runs) {
        sumInto(used, { ...daemon.requests, pods: '1' });
        ports.push(...daemon.hostPorts.map((p) => `${p.protocol}:${p.port}`));
      }
    }
    for (const pod of podsOf(claim.pods)) {
      for (const taint of pool.taints) {
        if (taint.effect !== 'PreferNoSchedule' && !tolerates(pod, taint)) problems.push(`${claim.name}: ${pod.name} does not tolerate ${taint.key}`);
      }
    }
    hosts.push({ name: claim.name, labels, allocatable, used, pods: podsOf(claim.pods), ports });
  }
  for (const node of input.existingNodes) {
    const allocatable: Record<string, number> = {};
    sumInto(allocatable, node.allocatable);
    const used: Record<string, number> = {};
    node.pods.forEach((p) => sumInto(used, { ...p.requests, pods: '1' }));
    const placed = podsOf(plan.existingNodes.find((n) => n.name === node.name)?.pods ?? []);
    for (const pod of placed) {
      for (const taint of node.taints) {
        if (taint.effect !== 'PreferNoSchedule' && !tolerates(pod, taint)) problems.push(`${node.name}: ${pod.name} does not tolerate ${taint.key}`);
      }
    }
    hosts.push({ name: node.name, labels: { 'kubernetes.io/hostname': node.name, ...node.labels }, allocatable, used, pods: placed, ports: node.pods.flatMap((p) => p.hostPorts.map((h) => `${h.protocol}:${h.port}`)) });
  }

  for (const host of hosts) {
    for (const pod of host.pods) {
      if (!nodeMatches(pod, host.labels)) problems.push(`${host.name}: ${pod.name} node selector/affinity not satisfied`);
      sumInto(host.used, { ...pod.requests, pods: '1' });
      for (const port of pod.hostPorts) {
        const key = `${port.protocol}:${port.port}`;
        if (host.ports.includes(key)) problems.push(`${host.name}: host port ${key} used twice`);
        host.ports.push(key);
      }
    }
    for (const [name, value] of Object.entries(host.used)) {
      if (value > (host.allocatable[name] ?? 0) * (1 + 1e-9) + 1e-9) problems.push(`${host.name}: ${name} used ${value} > allocatable ${host.allocatable[name] ?? 0}`);
    }
  }

  // Topology, over pending pods placed plus pods already running on existing nodes.
  const everyone = hosts.flatMap((h) => [
    ...h.pods.map((p) => ({ host: h, labels: p.labels, namespace: p.namespace })),
    ...(input.existingNodes.find((n) => n.name === h.name)?.pods ?? []).map((p) => ({ host: h, labels: p.labels, namespace: p.namespace })),
  ]);
  const domain = (host: Host, key: string): string | undefined => host.labels[key];
  for (const host of hosts) {
    for (const pod of host.pods) {
      for (const term of pod.podAntiAffinity.required) {
        const mine = domain(host, term.topologyKey);
        const clash = everyone.filter((o) => o.labels !== pod.labels && domain(o.host, term.topologyKey) === mine
          && (term.namespaceSelector !== undefined || (term.namespaces ?? [pod.namespace]).includes(o.namespace)) && selects(term.labelSelector, o.labels));
        const others = clash.filter((o) => !(o.host === host && o.labels === pod.labels));
        if (others.length > 0) problems.push(`${host.name}: ${pod.name} anti-affinity on ${term.topologyKey} violated`);
      }
      for (const term of pod.podAffinity.required) {
        const mine = domain(host, term.topologyKey);
        const friends = everyone.filter((o) => domain(o.host, term.topologyKey) === mine && selects(term.labelSelector, o.labels)
          && (term.namespaceSelector !== undefined || (term.namespaces ?? [pod.namespace]).includes(o.namespace)));
        if (friends.length === 0) problems.push(`${host.name}: ${pod.name} affinity on ${term.topologyKey} violated`);
      }
    }
  }
  // Spread, as kube-scheduler checks a DoNotSchedule constraint when its owner arrives: the
  // matching pods in the owner's domain (itself included if it matches) minus the fewest in
  // any eligible domain must not exceed maxSkew. Pods arrive in any order, so every matching
  // pod of the owner's domain may be bound before it: the final counts must pass. Only the
  // owner is checked (a pod that merely matches is never refused), and for hostname another
  // eligible node can still be empty of matching pods, so the fewest is 0.
  const eligibleZones = new Map<PendingPod, Set<string>>();
  const zonesFor = (pod: PendingPod): Set<string> => {
    let eligible = eligibleZones.get(pod);
    if (eligible !== undefined) return eligible;
    eligible = new Set<string>();
    for (const pool of input.nodePools) {
      for (const type of pool.instanceTypes) {
        for (const o of type.offerings) {
          if (o.available && nodeMatches(pod, { ...type.labels, ...pool.labels, 'topology.kubernetes.io/zone': o.zone, 'karpenter.sh/capacity-type': o.capacityType })) eligible.add(o.zone);
        }
      }
    }
    for (const node of input.existingNodes) {
      const zone = node.labels['topology.kubernetes.io/zone'];
      if (zone !== undefined && nodeMatches(pod, node.labels)) eligible.add(zone);
    }
    eligibleZones.set(pod, eligible);
    return eligible;
  };
  for (const host of hosts) {
    for (const pod of host.pods) {
      for (const constraint of pod.topologySpread) {
        if (constraint.whenUnsatisfiable !== 'DoNotSchedule') continue;
        const selector = { ...constraint.labelSelector, matchExpressions: [...(constraint.labelSelector?.matchExpressions ?? []), ...(constraint.matchLabelKeys ?? []).filter((k) => pod.labels[k] !== undefined).map((k) => ({ key: k, operator: 'In', values: [pod.labels[k] ?? ''] }))] };
        const matching = everyone.filter((o) => o.namespace === pod.namespace && constraint.labelSelector !== undefined && selects(selector, o.labels));
        if (constraint.topologyKey === 'kubernetes.io/hostname') {
          const here = matching.filter((o) => o.host === host).length;
          if (here > constraint.maxSkew) problems.push(`${host.name}: ${pod.name} hostname spread ${JSON.stringify(constraint.labelSelector)}: ${here} matching pods > maxSkew ${constraint.maxSkew}`);
        } else if (constraint.topologyKey === 'topology.kubernetes.io/zone') {
          const counts = new Map<string, number>([...zonesFor(pod)].map((z) => [z, 0]));
          for (const o of matching) {
            const zone = o.host.labels['topology.kubernetes.io/zone'];
            if (zone !== undefined && counts.has(zone)) counts.set(zone, (counts.get(zone) ?? 0) + 1);
          }
          const mine = counts.get(host.labels['topology.kubernetes.io/zone'] ?? '') ?? 0;
          const fewest = counts.size < (constraint.minDomains ?? 1) ? 0 : Math.min(...counts.values());
          if (mine - fewest > constraint.maxSkew) problems.push(`${host.name}: ${pod.name} zone spread ${JSON.stringify(constraint.labelSelector)}: skew ${mine - fewest} > ${constraint.maxSkew}`);
        }
      }
    }
  }
  // Limits: the chosen types' capacity on top of current usage.
  for (const pool of input.nodePools) {
    const total: Record<string, number> = {};
    sumInto(total, pool.usage);
    const claims = plan.nodeClaims.filter((c) => c.nodePool === pool.name);
    for (const claim of claims) {
      const type = pool.instanceTypes.find((t) => t.name === claim.instanceType);
      if (type !== undefined) sumInto(total, type.capacity);
    }
    total.nodes = (total.nodes ?? 0) + claims.length;
    for (const [name, limit] of Object.entries(pool.limits)) {
      if ((total[name] ?? 0) > quantityValue(limit) + 1e-9) problems.push(`NodePool ${pool.name}: ${name} ${total[name] ?? 0} exceeds limit ${limit}`);
    }
  }
  return problems;
}
