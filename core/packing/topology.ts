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
  readonly owners: Map<string, number>;
  total: number;
}

export interface ClassTopology {
  /** Groups whose constraint this class must satisfy, with whether it matches itself. */
  readonly own: readonly { readonly group: TopologyGroup; readonly selfMatch: boolean }[];
  /** Groups whose selector this class matches (counted when it is placed). */
  readonly matching: readonly TopologyGroup[];
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

export class Topology {
  readonly groups: TopologyGroup[] = [];
  private readonly byKey = new Map<string, TopologyGroup>();

  private group(kind: GroupKind, key: string, namespaces: ReadonlySet<string> | undefined, selector: LabelSelector | undefined, skew: { maxSkew: number; minDomains: number }): TopologyGroup {
    const identity = JSON.stringify([kind, key, namespaces === undefined ? null : [...namespaces].sort(), selector ?? null, skew.maxSkew, skew.minDomains]);
    let group = this.byKey.get(identity);
    if (group === undefined) {
      group = { id: this.groups.length, kind, key, namespaces, selector, ...skew, counts: new Map(), owners: new Map(), total: 0 };
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
    const own = [
      ...spreadConstraints(spec).map((c) => this.spreadGroup(c, subject)),
      ...requiredAffinityTerms(spec).map((t) => this.termGroup('affinity', t, subject)),
      ...requiredAntiAffinityTerms(spec).map((t) => this.termGroup('anti', t, subject)),
    ].map((group) => ({ group, selfMatch: groupMatches(group, subject) }));
    const matching = this.groups.filter((g) => groupMatches(g, subject));
    const repelledBy = matching.filter((g) => g.kind === 'anti');
    const keys = [...new Set([...own.map((o) => o.group.key), ...matching.map((g) => g.key), ...repelledBy.map((g) => g.key)])].sort();
    let perNode = Infinity;
    for (const { group, selfMatch } of own) {
      if (group.key !== LabelKey.hostname || !selfMatch) continue;
      if (group.kind === 'anti') perNode = Math.min(perNode, 1);
      if (group.kind === 'spread') perNode = Math.min(perNode, group.maxSkew);
    }
    return { own, matching, repelledBy, keys, perNode };
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
    return undefined;
  }

  /** Counts a placed pod; `owns` lists the anti-affinity groups it carries. */
  recordMutating(topology: Pick<ClassTopology, 'matching'>, owns: readonly TopologyGroup[], domainOf: (key: string) => string | undefined): void {
    for (const group of topology.matching) {
      const domain = domainOf(group.key);
      if (domain === undefined) continue;
      group.counts.set(domain, (group.counts.get(domain) ?? 0) + 1);
      group.total += 1;
    }
    for (const group of owns) {
      const domain = domainOf(group.key);
      if (domain === undefined) continue;
      group.owners.set(domain, (group.owners.get(domain) ?? 0) + 1);
    }
  }

  /** Groups with selectors matching a pod that is already running (not a pending class). */
  matchingGroups(subject: Subject): TopologyGroup[] {
    return this.groups.filter((g) => groupMatches(g, subject));
  }
}

function groupMatches(group: TopologyGroup, subject: Subject): boolean {
  if (group.namespaces !== undefined && !group.namespaces.has(subject.namespace)) return false;
  return selectorMatches(group.selector, subject.labels);
}

function minimum(group: TopologyGroup, universe: readonly string[]): number {
  if (universe.length < group.minDomains) return 0;
  let min = Infinity;
  for (const domain of universe) min = Math.min(min, group.counts.get(domain) ?? 0);
  return min === Infinity ? 0 : min;
}
