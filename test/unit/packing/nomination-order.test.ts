// Plans whose nominations kube-scheduler can honour in any arrival order (issue 14 finding 2,
// round 2). autonode nominates each planned pod to its node; kube-scheduler then filters a
// pod twice on that node — with the node's other unbound nominees added as if bound, and
// without — and both must pass (v1.34 `addGENominatedPods`). For a zone spread the first
// pass adds only this node's nominees to its zone, so a node holding an owner next to other
// unbound pods matching the owner's selector can refuse its own nominee where the plain
// filter accepts it, and a refused nominee loses its nomination.
//
// Here every order of binding a small plan's pods is enumerated; at each bind the owner's
// spread is checked both ways on its planned node. Asserted: whenever the plain filter
// accepts a pod, the filter with nominees accepts it too.
import { solve, type PackingInput, type PendingPod, type Plan } from '../../../core/packing';
import { anInput, pods, type PodOptions } from './builders';
import { checkPlan } from './checker';

interface PlacedPod {
  readonly pod: PendingPod;
  readonly node: string;
  readonly zone: string;
}

const matchLabels = (selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>) =>
  Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);

/** kube-scheduler's zone spread filter for `pod` on its planned node, given the bound pods and (optionally) that node's other nominees. */
function spreadAccepts(pod: PlacedPod, bound: readonly PlacedPod[], nominees: readonly PlacedPod[], zones: readonly string[]): boolean {
  return pod.pod.topologySpread.filter((c) => c.whenUnsatisfiable === 'DoNotSchedule' && c.topologyKey === 'topology.kubernetes.io/zone').every((c) => {
    const counted = [...bound, ...nominees].filter((other) => matchLabels(c.labelSelector, other.pod.labels));
    const inZone = (zone: string) => counted.filter((other) => other.zone === zone).length;
    const min = Math.min(...zones.map(inZone));
    const self = matchLabels(c.labelSelector, pod.pod.labels) ? 1 : 0;
    return inZone(pod.zone) + self - min <= c.maxSkew;
  });
}

function* permutations<T>(items: readonly T[]): Generator<T[]> {
  if (items.length <= 1) {
    yield [...items];
    return;
  }
  for (let i = 0; i < items.length; i++) {
    const rest = [...items.slice(0, i), ...items.slice(i + 1)];
    for (const tail of permutations(rest)) yield [items[i] as T, ...tail];
  }
}

/** Orders (as pod names) and the pod a nomination made its own node refuse, plain filter accepting. */
function refusalsForNominations(placed: readonly PlacedPod[]): { order: string[]; refused: string }[] {
  const zones = [...new Set(placed.map((p) => p.zone))].sort();
  const found: { order: string[]; refused: string }[] = [];
  for (const order of permutations(placed)) {
    const bound: PlacedPod[] = [];
    for (const pod of order) {
      const nominees = order.filter((other) => other !== pod && other.node === pod.node && !bound.includes(other));
      if (spreadAccepts(pod, bound, [], zones) && !spreadAccepts(pod, bound, nominees, zones)) {
        found.push({ order: order.map((p) => p.pod.name), refused: pod.pod.name });
        break;
      }
      bound.push(pod);
    }
  }
  return found;
}

function placedPods(input: PackingInput, plan: Plan): PlacedPod[] {
  const byKey = new Map(input.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  return plan.nodeClaims.flatMap((claim) => claim.pods.map((key) => {
    const pod = byKey.get(key);
    if (pod === undefined) throw new Error(`plan names ${key}, not in the input`);
    return { pod, node: claim.name, zone: claim.zone };
  }));
}

const spreadOverB: PodOptions['topologySpread'] = [{ topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'b' } } }];
const small = { cpu: '250m', memory: '256Mi' };

describe('nominations kube-scheduler honours in any arrival order (zone spread, every order enumerated)', () => {
  it.each<[string, PendingPod[]]>([
    ['owners that do not match their own selector, next to pods that do', [...pods(2, 'owner', { labels: { app: 'owner' }, topologySpread: spreadOverB, ...small }), ...pods(4, 'b', { labels: { app: 'b' }, ...small })]],
    ['owners that match their own selector (a Deployment spreading itself)', [...pods(5, 'self', { labels: { app: 'b' }, topologySpread: spreadOverB, ...small })]],
    ['both kinds of owner and plain matching pods', [...pods(2, 'owner', { labels: { app: 'owner' }, topologySpread: spreadOverB, ...small }), ...pods(2, 'self', { labels: { app: 'b' }, topologySpread: spreadOverB, ...small }), ...pods(3, 'b', { labels: { app: 'b' }, ...small })]],
  ])('%s: no nominee is refused by its own node where the plain filter accepts it', (_, all) => {
    const input = anInput({ pods: all });
    const plan = solve(input);
    expect(plan.unschedulable).toEqual([]);
    expect(checkPlan(input, plan)).toEqual([]);
    const placed = placedPods(input, plan);
    expect(placed).toHaveLength(all.length);
    expect(refusalsForNominations(placed)).toEqual([]);
  });

  it('the enumeration finds the refusal in a plan that puts an owner next to a matching pod (the checker can fail)', () => {
    const at = (name: string, labels: Record<string, string>, node: string, zone: string, spread: PodOptions['topologySpread'] = []): PlacedPod =>
      ({ pod: pods(1, name, { labels, topologySpread: spread })[0] as PendingPod, node, zone });
    const owner = at('owner', { app: 'owner' }, 'n1', 'us-east-1a', spreadOverB);
    // near bound first: zone a holds 1, zone b 0, so the owner is at the limit (1 − 0 ≤ 1);
    // b, still only nominated to the owner's node, makes it 2 − 0 > 1.
    const placed = [owner, at('b', { app: 'b' }, 'n1', 'us-east-1a'), at('far', { app: 'b' }, 'n2', 'us-east-1b'), at('near', { app: 'b' }, 'n3', 'us-east-1a')];
    const refusals = refusalsForNominations(placed);
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.every((r) => r.refused === 'owner-0')).toBe(true);
  });
});
