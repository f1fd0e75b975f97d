// `npm run bench:realise`: how many of a plan's pods the real kube-scheduler leaves Pending
// when it is free to place them (issue 14 finding 2, issue 12 test 8), for autonode's plan
// and the Karpenter-loop baseline, on every scenario with topology rules. Starts its own
// local stack (kube-apiserver, controller-manager, kube-scheduler, kwok) and prints one
// row per (scenario, planner, arrival): Pending pods and kube-scheduler's reasons.
//
//   npm run bench:realise                                   every scenario, 300 pods
//   npm run bench:realise -- --pods 1000 --scenario karpenter-exact
//   npm run bench:realise -- --modes nodes-first,product,nominated,renominated
//   npm run bench:realise -- --follow-up 3      then up to 3 provisioner rounds for what is left
//
// Modes (test/support/realise.ts): `nodes-first` — the nodes are Ready before the pods
// arrive; `pods-first` — the product's order, pods Pending first, nodes' gates lifted one
// by one; `nominated` — the same, each node's planned pods nominated to it before its
// gate is lifted (what autonode does at registration); `renominated` — and nominated again
// while kube-scheduler keeps clearing nominations of pods still Pending; `nominated-early` —
// every pod nominated before the first gate lifts; `nominated-zones-interleaved` — nominated
// at each gate, gates lifted one zone after another in turn (realise.ts `gateOrder`);
// `nominated-together` — the batch gate: every node's pods nominated, then every gate lifted
// at once; `product` — what autonode does: `nominated-together` for a batch whose plan has
// topology rules (core/provisioning/batch-gate.ts), `nominated` otherwise.
//
// `--follow-up N`: what the product does next. The pods still Pending once kube-scheduler
// settles go to the provisioner's next batch: the same planner plans them with the run's
// nodes (and the pods bound there) as existing nodes, its new nodes come up the same way,
// up to N rounds. Printed: Pending after the plan's own nodes, then each round's
// Pending → new nodes (+$/h), and Pending at the end.
import { loadLinearSolver } from '../../activities/packing/highs';
import { kubeClientsFromKubeconfigFile } from '../../activities/kube/clients';
import { solve, type PackingInput } from '../../core/packing';
import { karpenterLoop } from '../../core/packing/baseline/karpenter-loop';
import { startStack } from '../../dev/stack/launcher';
import { countReasons, newNodesOf, nodesOfBaseline, nodesOfPlan, realise, type FollowUpPlan, type PlannedNode, type RealiseOptions } from '../support/realise';
import { topologyHeavy } from './generators';
import { karpenterExact } from './karpenter-exact';

const scenarios: Record<string, (pods: number) => PackingInput> = {
  'karpenter-exact': (n) => karpenterExact(n),
  'topology-heavy': (n) => topologyHeavy(n),
};

const modes: Record<string, RealiseOptions> = {
  'nodes-first': { placement: 'free', arrival: 'nodes-first' },
  'pods-first': { placement: 'free', arrival: 'pods-first' },
  nominated: { placement: 'free', arrival: 'pods-first', nominate: true },
  'nominated-but-zone-spread': { placement: 'free', arrival: 'pods-first', nominate: true, nominateZoneSpread: false },
  'nominated-early': { placement: 'free', arrival: 'pods-first', nominate: true, nominateAt: 'before-gates' },
  renominated: { placement: 'free', arrival: 'pods-first', nominate: true, renominateRounds: 6 },
  product: { placement: 'free', arrival: 'pods-first', nominate: true, gateOrder: 'product' },
  'nominated-together': { placement: 'free', arrival: 'pods-first', nominate: true, gateOrder: 'together' },
  'nominated-together-but-zone-spread': { placement: 'free', arrival: 'pods-first', nominate: true, gateOrder: 'together', nominateZoneSpread: false },
  'nominated-zones-interleaved': { placement: 'free', arrival: 'pods-first', nominate: true, gateOrder: 'zones-round-robin' },
};

/** Pod keys counted by their name without the trailing index (the generators name pods by kind). */
function byKind(keys: readonly string[]): string {
  const counts: Record<string, number> = {};
  for (const key of keys) {
    const kind = (key.split('/')[1] ?? key).replace(/-\d+$/, '');
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return JSON.stringify(counts);
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  const size = Number(flag('--pods') ?? '300');
  if (!Number.isInteger(size) || size < 10) throw new Error(`--pods must be an integer ≥ 10, got ${flag('--pods') ?? ''}`);
  const only = flag('--scenario');
  const names = Object.keys(scenarios).filter((n) => only === undefined || n === only);
  if (names.length === 0) throw new Error(`--scenario: unknown ${only ?? ''}; known: ${Object.keys(scenarios).join(', ')}`);
  const modeNames = (flag('--modes') ?? Object.keys(modes).join(',')).split(',');
  for (const m of modeNames) if (modes[m] === undefined) throw new Error(`--modes: unknown ${m}; known: ${Object.keys(modes).join(', ')}`);
  const planners = (flag('--planners') ?? 'autonode,karpenter-loop').split(',');
  const followUpRounds = Number(flag('--follow-up') ?? '0');
  if (!Number.isInteger(followUpRounds) || followUpRounds < 0) throw new Error(`--follow-up must be an integer ≥ 0, got ${flag('--follow-up') ?? ''}`);

  const stack = await startStack({ log: () => undefined });
  try {
    const kube = kubeClientsFromKubeconfigFile(stack.info.guest.kubeconfigPath);
    const linearSolver = await loadLinearSolver();
    console.log(['scenario', 'pods', 'planner', 'nodes', '$/h', 'mode', 'Pending first', 'first: reasons', 'first: by kind', 'follow-up rounds', 'Pending', 'topology', 'elsewhere', 'nominated at end', 'reasons', 'Pending by kind', 'lost nomination by kind', 's'].join(' | '));
    for (const name of names) {
      const input = (scenarios[name] ?? karpenterExact)(size);
      const plans: [string, PlannedNode[], number, (next: PackingInput) => FollowUpPlan][] = [];
      if (planners.includes('autonode')) {
        const plan = solve(input, { linearSolver });
        if (plan.unschedulable.length > 0) throw new Error(`${name}: autonode left ${plan.unschedulable.length} pods unschedulable`);
        plans.push(['autonode', nodesOfPlan(plan), plan.totalPrice, (next) => {
          const more = solve(next, { linearSolver });
          return { nodes: newNodesOf(more), price: more.totalPrice, onExisting: more.existingNodes.reduce((sum, n) => sum + n.pods.length, 0) };
        }]);
      }
      if (planners.includes('karpenter-loop')) {
        const baseline = karpenterLoop(input);
        plans.push(['karpenter-loop', nodesOfBaseline(baseline, input), baseline.totalPrice, (next) => {
          const more = karpenterLoop(next);
          return { nodes: nodesOfBaseline(more, next).map((node) => ({ ...node, claim: `more-${node.claim}` })), price: more.totalPrice, onExisting: more.onExisting };
        }]);
      }
      for (const [planner, nodes, price, followUp] of plans) {
        for (const mode of modeNames) {
          const r = await realise(kube, input, nodes, { ...modes[mode], timeoutMs: 600_000, ...(followUpRounds > 0 ? { followUp: { rounds: followUpRounds, plan: followUp } } : {}) });
          const rounds = r.rounds.map((round) => `${round.pending}→${round.nodes} (+${round.price.toFixed(2)}${round.onExisting > 0 ? `, ${round.onExisting} on existing` : ''})`).join('; ');
          console.log([name, r.pods, planner, r.nodes, price.toFixed(2), mode, r.pendingFirst.length, JSON.stringify(countReasons(r.pendingFirst)), byKind(r.pendingFirst.map((p) => p.pod)), rounds === '' ? '-' : rounds, r.pending.length, r.pendingForTopology.length, r.elsewhere, r.nominatedAtEnd, JSON.stringify(r.reasons), byKind(r.pending.map((p) => p.pod)), byKind(r.withoutNomination), r.seconds.toFixed(0)].join(' | '));
        }
      }
    }
  } finally {
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
