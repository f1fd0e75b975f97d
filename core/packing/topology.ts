// Topology: spread constraints and pod (anti-)affinity, counted per domain.
//
// A group is one (kind, topology key, namespaces, selector, skew) tuple; many classes
// share it. `counts` holds, per domain, the pods matching the selector; for
// anti-affinity `owners` holds the pods carrying the term, so the rule is symmetric (an
// incoming pod matching a placed pod's anti-affinity is kept away too).
//
// Domains: hostname is per node (new claims get a synthetic one); zone and capacity type
// come from node labels, or from the zone/capacity type a new claim is pinned to as soon
// as a pod that needs it joins. Hostname spread assumes an empty new node is always
// possible, so its minimum is 0 (Karpenter's reading, topologygroup.go).
//
// Arrival order (issue 14): kube-scheduler binds pods first come first served and checks a
// spread constraint only for the pod that carries it, against the pods already bound. A
// pod that merely matches the selector can arrive first, so a plan that put it next to an
// owner is realisable only if the owner's constraint still holds with it counted. With
// `guardSpread`, a pod matching a DoNotSchedule spread selector may join a domain where an
// owner of that constraint is placed only while that domain stays within the owners'
// skew (count + 1 − min ≤ maxSkew, min over every domain an owner could use). Karpenter
// has no such rule (40–48 of 1,000 pods Pending on its plan of its own benchmark input),
// so the Karpenter-loop baseline runs without it.
//
// Nominations (issue 14, round 2): autonode sets each planned pod's nominatedNodeName to its
// node just before the node becomes schedulable. kube-scheduler then filters a pod on a node
// twice, once with the node's other nominees added as if bound (`addGENominatedPods`), and
// both must pass; for a zone spread that adds only *this node's* nominees to its zone. So an
// owner whose node holds other, still unbound pods matching its selector can refuse its own
// node when its zone is at the skew limit, where without nominations it would have fit — and
// a refusal with no other node clears the nomination. The same guard therefore also keeps a
// node that holds an owner of a zone-level spread to no pod matching its selector but that
// owner itself (`hostGuarded`): then a nominee is never refused for another nominee of its
// node, whatever the arrival order. Rejected: at most maxSkew matching pods per node; it
// holds only while the owner's zone is the least loaded, and non-self-matching owners (6 of
// 7 on Karpenter's benchmark input) would still refuse their node in the other orders.
import { LabelKey } from '../scheduling/labels';
import type { LabelSelector, PodAffinityTerm, TopologySpread } from './input';
import { requiredAffinityTerms, requiredAntiAffinityTerms, spreadConstraints } from './preferences';
import { describeSelector, selectorMatches, withMatchLabelKeys } from './selectors';

export type GroupKind = 'spread' | 'affinity' | 'anti';

export interface TopologyGroup {
  readonly id: number;
  readonly kind: GroupKind;
  readonly key: string;
  /** undefined: all namespaces. */
  readonly namespaces: ReadonlySet<string> | undefined;
  readonly selector: LabelSelector | undefined;
  readonly maxSkew: number;
  readonly minDomains: number;
  readonly counts: Map<string, number>;
  /** Per domain, pods carrying the rule (anti-affinity; DoNotSchedule spread). */
  readonly owners: Map<string, number>;
  /** Spread: every domain of the key an owner placed so far could have used (its skew minimum). */
  readonly ownerDomains: Set<string>;
  /** Spread on a key other than hostname, per node (hostname domain): pods matching the selector, owners, owners matching it. */
  readonly perHost: Map<string, HostCount>;
  total: number;
}

export interface HostCount {
  matching: number;
  owners: number;
  ownersMatching: number;
}

/** A zone-level spread group as one class bears on a node holding it (see the header, nominations). */
export interface HostGuard {
  readonly group: TopologyGroup;
  readonly owns: boolean;
  readonly matches: boolean;
}

export interface OwnGroup {
  readonly group: TopologyGroup;
  /** Whether the class matches the group's selector itself. */
  readonly selfMatch: boolean;
  /** Anti-affinity, or a DoNotSchedule spread: placements are counted as owners (see the header). */
  readonly owns: boolean;
}

export interface ClassTopology {
  /** Groups whose constraint this class must satisfy. */
  readonly own: readonly OwnGroup[];
  /** Groups whose selector this class matches (counted when it is placed). */
  readonly matching: readonly TopologyGroup[];
  /** Spread groups this class matches without owning: their owners' skew bounds it (guardSpread). */
  readonly guarded: readonly TopologyGroup[];
  /** Zone-level spread groups this class owns or matches, kept nomination-safe per node (guardSpread). */
  readonly hostGuarded: readonly HostGuard[];
  /** Anti-affinity groups whose selector this class matches: owners repel it. */
  readonly repelledBy: readonly TopologyGroup[];
  /** Topology keys a node must have a known domain for before this class joins it. */
  readonly keys: readonly string[];
  /** At most this many pods of the class per node (hostname rules), Infinity if none. */
  readonly perNode: number;
}

interface Subject {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface TopologyOptions {
  /** Keep every owner's spread satisfiable whatever the arrival order (see the header). */
  readonly guardSpread?: boolean;
}

export class Topology {
  readonly groups: TopologyGroup[] = [];
  private readonly byKey = new Map<string, TopologyGroup>();
  private readonly guardSpread: boolean;

  constructor(options: TopologyOptions = {}) {
    this.guardSpread = options.guardSpread ?? false;
  }

  private group(kind: GroupKind, key: string, namespaces: ReadonlySet<string> | undefined, selector: LabelSelector | undefined, skew: { maxSkew: number; minDomains: number }): TopologyGroup {
    const identity = JSON.stringify([kind, key, namespaces === undefined ? null : [...namespaces].sort(), selector ?? null, skew.maxSkew, skew.minDomains]);
    let group = this.byKey.get(identity);
    if (group === undefined) {
      group = { id: this.groups.length, kind, key, namespaces, selector, ...skew, counts: new Map(), owners: new Map(), ownerDomains: new Set(), perHost: new Map(), total: 0 };
      this.groups.push(group);
      this.byKey.set(identity, group);
    }
    return group;
  }

  spreadGroup(constraint: TopologySpread, subject: Subject): TopologyGroup {
    const selector = withMatchLabelKeys(constraint.labelSelector, constraint.matchLabelKeys ?? [], subject.labels);
    return this.group('spread', constraint.topologyKey, new Set([subject.namespace]), selector, { maxSkew: constraint.maxSkew, minDomains: constraint.minDomains ?? 1 });
  }

  termGroup(kind: 'affinity' | 'anti', term: PodAffinityTerm, subject: Subject): TopologyGroup {
    // An empty namespaceSelector means all namespaces; a non-empty one needs namespace
    // labels the solver does not have, so it is read as "all" (conservative for anti-affinity).
    const namespaces = term.namespaceSelector !== undefined ? undefined : new Set(term.namespaces ?? [subject.namespace]);
    return this.group(kind, term.topologyKey, namespaces, term.labelSelector, { maxSkew: 0, minDomains: 0 });
  }

  /** Creates the groups a class needs; call before solving so counting is complete. */
  register(subject: Subject, spec: Parameters<typeof spreadConstraints>[0]): void {
    for (const c of spreadConstraints(spec)) this.spreadGroup(c, subject);
    for (const t of requiredAffinityTerms(spec)) this.termGroup('affinity', t, subject);
    for (const t of requiredAntiAffinityTerms(spec)) this.termGroup('anti', t, subject);
  }

  classTopology(subject: Subject, spec: Parameters<typeof spreadConstraints>[0]): ClassTopology {
    // spreadConstraints lists the DoNotSchedule constraints first; ScheduleAnyway ones are
    // kept while unrelaxed but never block a real scheduler, so they own nothing.
    const hardSpread = spec.spread.length;
    const own: OwnGroup[] = [
      ...spreadConstraints(spec).map((c, i) => ({ group: this.spreadGroup(c, subject), owns: this.guardSpread && i < hardSpread })),
      ...requiredAffinityTerms(spec).map((t) => ({ group: this.termGroup('affinity', t, subject), owns: false })),
      ...requiredAntiAffinityTerms(spec).map((t) => ({ group: this.termGroup('anti', t, subject), owns: true })),
    ].map((o) => ({ ...o, selfMatch: groupMatches(o.group, subject) }));
    const matching = this.groups.filter((g) => groupMatches(g, subject));
    const repelledBy = matching.filter((g) => g.kind === 'anti');
    const guarding = this.guardSpread && spec.guardsSpread;
    const guarded = guarding ? matching.filter((g) => g.kind === 'spread' && !own.some((o) => o.group === g)) : [];
    const hostGuarded: HostGuard[] = [];
    if (guarding) {
      const zoneLevel = (g: TopologyGroup) => g.kind === 'spread' && g.key !== LabelKey.hostname;
      for (const { group, owns, selfMatch } of own) if (owns && zoneLevel(group)) hostGuarded.push({ group, owns: true, matches: selfMatch });
      for (const group of matching) if (zoneLevel(group) && !hostGuarded.some((h) => h.group === group)) hostGuarded.push({ group, owns: false, matches: true });
    }
    const keys = [...new Set([...own.map((o) => o.group.key), ...matching.map((g) => g.key), ...repelledBy.map((g) => g.key)])].sort();
    let perNode = Infinity;
    for (const { group, selfMatch } of own) {
      if (group.key !== LabelKey.hostname || !selfMatch) continue;
      if (group.kind === 'anti') perNode = Math.min(perNode, 1);
      if (group.kind === 'spread') perNode = Math.min(perNode, group.maxSkew);
    }
    return { own, matching, guarded, hostGuarded, repelledBy, keys, perNode };
  }

  /**
   * Why a pod of this class may not join a node whose domain for each key is given by
   * `domainOf`, or undefined if it may. `universe` lists the eligible domains of a key for
   * spread minimums (zones the class could land in).
   */
  violation(topology: ClassTopology, domainOf: (key: string) => string | undefined, universe: (key: string) => readonly string[]): string | undefined {
    for (const { group, selfMatch } of topology.own) {
      const domain = domainOf(group.key);
      if (domain === undefined) return `node has no ${group.key} label`;
      const count = group.counts.get(domain) ?? 0;
      switch (group.kind) {
        case 'spread': {
          const min = group.key === LabelKey.hostname ? 0 : minimum(group, universe(group.key));
          if (count + (selfMatch ? 1 : 0) - min > group.maxSkew) {
            return `topology spread on ${group.key} (maxSkew ${group.maxSkew}, selector ${describeSelector(group.selector)}): ${domain} has ${count}, the least loaded eligible domain ${min}`;
          }
          break;
        }
        case 'affinity':
          if (count === 0 && !(group.total === 0 && selfMatch)) {
            return `pod affinity on ${group.key} (selector ${describeSelector(group.selector)}): no matching pod in ${domain}`;
          }
          break;
        case 'anti':
          if (count > 0) return `pod anti-affinity on ${group.key} (selector ${describeSelector(group.selector)}): ${domain} already has ${count} matching pod(s)`;
          break;
        default: {
          const unexpected: never = group.kind;
          throw new Error(`unexpected group kind ${String(unexpected)}`);
        }
      }
    }
    for (const group of topology.repelledBy) {
      const domain = domainOf(group.key);
      if (domain === undefined) return `node has no ${group.key} label`;
      if ((group.owners.get(domain) ?? 0) > 0) {
        return `anti-affinity of pods already in ${domain} (${group.key}, selector ${describeSelector(group.selector)})`;
      }
    }
    for (const group of topology.guarded) {
      const domain = domainOf(group.key);
      // A node without the key is no domain: kube-scheduler does not count its pods.
      if (domain === undefined || (group.owners.get(domain) ?? 0) === 0) continue;
      const count = group.counts.get(domain) ?? 0;
      const min = group.key === LabelKey.hostname ? 0 : minimum(group, group.ownerDomains);
      if (count + 1 - min > group.maxSkew) {
        return `topology spread of pods already in ${domain} (${group.key}, maxSkew ${group.maxSkew}, selector ${describeSelector(group.selector)}): ${domain} has ${count} matching pod(s), the least loaded domain ${min}`;
      }
    }
    const host = topology.hostGuarded.length > 0 ? domainOf(LabelKey.hostname) : undefined;
    if (host !== undefined) {
      for (const { group, owns, matches } of topology.hostGuarded) {
        const now = group.perHost.get(host);
        const after = {
          matching: (now?.matching ?? 0) + (matches ? 1 : 0),
          owners: (now?.owners ?? 0) + (owns ? 1 : 0),
          ownersMatching: (now?.ownersMatching ?? 0) + (owns && matches ? 1 : 0),
        };
        if (!nominationSafe(after)) {
          return `topology spread on ${group.key} with nominations (maxSkew ${group.maxSkew}, selector ${describeSelector(group.selector)}): node ${host} would hold ${after.owners} pod(s) owning the constraint and ${after.matching} matching its selector; kube-scheduler counts a node's other nominees against each owner`;
        }
      }
    }
    return undefined;
  }

  /**
   * Counts a placed pod: in every group it matches, and as an owner of the groups it owns
   * (`universe`: the domains of a key the pod could have used, its spread minimum's).
   */
  recordMutating(topology: Pick<ClassTopology, 'matching' | 'own'>, domainOf: (key: string) => string | undefined, universe: (key: string) => readonly string[]): void {
    const host = domainOf(LabelKey.hostname);
    const perHost = (group: TopologyGroup): HostCount | undefined => {
      if (host === undefined || group.kind !== 'spread' || group.key === LabelKey.hostname) return undefined;
      let count = group.perHost.get(host);
      if (count === undefined) {
        count = { matching: 0, owners: 0, ownersMatching: 0 };
        group.perHost.set(host, count);
      }
      return count;
    };
    for (const group of topology.matching) {
      const domain = domainOf(group.key);
      if (domain === undefined) continue;
      group.counts.set(domain, (group.counts.get(domain) ?? 0) + 1);
      group.total += 1;
      const count = perHost(group);
      if (count !== undefined) count.matching += 1;
    }
    for (const { group, owns, selfMatch } of topology.own) {
      if (!owns) continue;
      const domain = domainOf(group.key);
      if (domain === undefined) continue;
      group.owners.set(domain, (group.owners.get(domain) ?? 0) + 1);
      if (group.kind === 'spread' && group.key !== LabelKey.hostname) for (const d of universe(group.key)) group.ownerDomains.add(d);
      const count = perHost(group);
      if (count !== undefined) {
        count.owners += 1;
        if (selfMatch) count.ownersMatching += 1;
      }
    }
  }

  /** Groups with selectors matching a pod that is already running (not a pending class). */
  matchingGroups(subject: Subject): TopologyGroup[] {
    return this.groups.filter((g) => groupMatches(g, subject));
  }
}

/**
 * A node's pods of one zone-level spread group are nomination-safe when no owner there can
 * see another pod of the node matching its selector: no owner, no matching pod, or exactly
 * one pod that is both (see the header).
 */
export function nominationSafe(count: HostCount): boolean {
  return count.owners === 0 || count.matching === 0 || (count.matching === 1 && count.owners === 1 && count.ownersMatching === 1);
}

function groupMatches(group: TopologyGroup, subject: Subject): boolean {
  if (group.namespaces !== undefined && !group.namespaces.has(subject.namespace)) return false;
  return selectorMatches(group.selector, subject.labels);
}

function minimum(group: TopologyGroup, universe: readonly string[] | ReadonlySet<string>): number {
  if (('size' in universe ? universe.size : universe.length) < group.minDomains) return 0;
  let min = Infinity;
  for (const domain of universe) min = Math.min(min, group.counts.get(domain) ?? 0);
  return min === Infinity ? 0 : min;
}
