// Plans kube-scheduler can follow whatever order the pods arrive in (issue 14, finding 2).
// kube-scheduler checks a spread constraint only for the pod that carries it, counting every
// bound pod its selector matches. A pod that merely matches can arrive first; if the plan
// put it next to an owner beyond the owner's skew, the owner stays Pending.
import { solve, type PendingPod, type Plan } from '../../../core/packing';
import { checkPlan } from './checker';
import { anExistingNode, anInput, pods, type PodOptions } from './builders';

const selectsB = { matchLabels: { app: 'b' } };
const hostnameSpread = (whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway' = 'DoNotSchedule'): PodOptions =>
  ({ labels: { app: 'owner' }, topologySpread: [{ topologyKey: 'kubernetes.io/hostname', maxSkew: 1, whenUnsatisfiable, labelSelector: selectsB }] });
const zoneSpread: PodOptions = { labels: { app: 'owner' }, topologySpread: [{ topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', labelSelector: selectsB }] };
/** Pods with no rule of their own that the owners' selector counts. */
const labelledB = (count: number): PendingPod[] => pods(count, 'b', { labels: { app: 'b' }, cpu: '250m', memory: '256Mi' });

function podsByClaim(plan: Plan, prefix: string): number[] {
  return plan.nodeClaims.map((claim) => claim.pods.filter((pod) => pod.startsWith(`default/${prefix}-`)).length);
}

describe('spread accounting counts every pod a selector matches, whatever the order of arrival', () => {
  it('keeps pods matching a hostname spread selector off an owner\'s node beyond its maxSkew', () => {
    const input = anInput({ pods: [...pods(2, 'owner', hostnameSpread()), ...labelledB(4)] });
    const plan = solve(input);
    expect(plan.unschedulable).toEqual([]);
    // The owners do not match their own selector: only the b pods count on their nodes.
    const bNextToOwners = plan.nodeClaims.filter((c) => c.pods.some((p) => p.startsWith('default/owner-'))).map((c) => c.pods.filter((p) => p.startsWith('default/b-')).length);
    expect(bNextToOwners.length).toBeGreaterThan(0);
    expect(Math.max(...bNextToOwners)).toBeLessThanOrEqual(1);
    expect(checkPlan(input, plan)).toEqual([]);
  });

  it('keeps pods matching a zone spread selector within maxSkew of the least loaded zone where owners are', () => {
    const input = anInput({ pods: [...pods(3, 'owner', zoneSpread), ...labelledB(6)] });
    const plan = solve(input);
    expect(plan.unschedulable).toEqual([]);
    const bByZone = new Map<string, number>([['us-east-1a', 0], ['us-east-1b', 0], ['us-east-1c', 0]]);
    for (const claim of plan.nodeClaims) bByZone.set(claim.zone, (bByZone.get(claim.zone) ?? 0) + claim.pods.filter((p) => p.startsWith('default/b-')).length);
    const fewest = Math.min(...bByZone.values());
    const ownerZones = [...new Set(plan.nodeClaims.filter((c) => c.pods.some((p) => p.startsWith('default/owner-'))).map((c) => c.zone))];
    expect(ownerZones.length).toBeGreaterThan(0);
    expect(Math.max(...ownerZones.map((zone) => (bByZone.get(zone) ?? 0) - fewest))).toBeLessThanOrEqual(1);
    expect(checkPlan(input, plan)).toEqual([]);
  });

  it('lets matching pods share a node with a ScheduleAnyway owner (kube-scheduler never refuses for it)', () => {
    const input = anInput({ pods: [...pods(1, 'owner', hostnameSpread('ScheduleAnyway')), ...labelledB(4)] });
    const plan = solve(input);
    expect(plan.nodeClaims).toHaveLength(1);
    expect(podsByClaim(plan, 'b')).toEqual([4]);
  });

  it('still places a pod the guard alone would leave out, where its own constraint allows (as kube-scheduler would)', () => {
    // us-east-1a runs a pod labelled c; 1b and 1c run two pods labelled a each.
    const running = (zone: string, name: string, app: string, count: number) => anExistingNode({
      name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': zone, 'kubernetes.io/arch': 'amd64' },
      allocatable: { cpu: '8', memory: '32Gi', pods: '29' },
      pods: Array.from({ length: count }, (_, i) => ({ namespace: 'default', name: `${name}-${app}-${i}`, labels: { app }, requests: { cpu: '100m' }, hostPorts: [], antiAffinity: [] })),
    });
    const spreadOver = (app: string) => [{ topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: { app } } }];
    const input = anInput({
      existingNodes: [running('us-east-1a', 'node-a', 'c', 1), running('us-east-1b', 'node-b', 'a', 2), running('us-east-1c', 'node-c', 'a', 2)],
      pods: [
        // Placed first (larger): owns a spread over app=c and joins node-a (1 − 0 ≤ 1).
        ...pods(1, 'c-owner', { labels: { app: 'y' }, cpu: '1', topologySpread: spreadOver('c') }),
        // Labelled c, spread over app=a: only us-east-1a keeps a within skew, where a second
        // c pod next to c-owner is what the guard forbids.
        ...pods(1, 'torn', { labels: { app: 'c' }, cpu: '100m', topologySpread: spreadOver('a') }),
      ],
    });
    const plan = solve(input);
    expect(plan.unschedulable).toEqual([]);
    const node = [...plan.existingNodes, ...plan.nodeClaims].find((n) => n.pods.includes('default/torn-0'));
    const zone = node === undefined ? undefined : 'zone' in node ? node.zone : input.existingNodes.find((n) => n.name === node.name)?.labels['topology.kubernetes.io/zone'];
    expect(zone).toBe('us-east-1a');
  });
});
