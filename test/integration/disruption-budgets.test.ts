// Disruption on the real stack, part two (issue 15's integration list): a Deployment scaled
// down 60 % under a PodDisruptionBudget is consolidated onto fewer nodes without the budget
// ever being violated; a NodeClaim past its expireAfter is replaced; and a NodePool budget
// of nodes: "0" with a schedule holds every disruption for its window and no longer.
import { type V1PodDisruptionBudget } from '@kubernetes/client-node';
import { bundledOnDemandPrices } from '../../core/instancetypes/catalog';
import { type Blocked } from '../../core/disruption';
import { type DisruptionStatus } from '../../workflows/disruption';
import { watchWorkflowId } from '../../workflows/watch';
import { disruptionKit, initialized, mergePatch, instanceIdOf, isRunningOn, onDemandCostPerHour, watchAvailability, type DisruptionKit } from '../support/disruption';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';

jest.setTimeout(420_000);

const DISRUPTED_TAINT = 'karpenter.sh/disrupted';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('disruption: scale-down under a PDB, expiry, scheduled budgets (real stack)', () => {
  let lh: LifecycleHarness;
  let kit: DisruptionKit;
  let namespace: string;
  let disruption: Awaited<ReturnType<DisruptionKit['startDisruption']>>;

  beforeAll(async () => {
    lh = await startLifecycleHarness();
    namespace = `dbud-${lh.id}`;
    kit = disruptionKit(lh, namespace);
    await lh.guest.core.createNamespace({ body: { metadata: { name: namespace } } });
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    await lh.t.client.workflow.start('watchWorkflow', { taskQueue: lh.taskQueues.control, workflowId: watchWorkflowId(cluster.name), args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: 'Never' }] });
    // one per cluster, running through every case: each pool keeps consolidateAfter: Never
    // until its case is ready to let it act
    disruption = await kit.startDisruption();
  });
  afterAll(async () => {
    await lh?.close();
  });

  const status = () => disruption.query<DisruptionStatus>('status');
  const taintedNodes = async (names: readonly (string | undefined)[]) => {
    const nodes = (await lh.guest.core.listNode()).items;
    return nodes.filter((n) => names.includes(n.metadata?.name) && n.spec?.taints?.some((t) => t.key === DISRUPTED_TAINT)).map((n) => n.metadata!.name!);
  };

  it('scale a Deployment down 60 % under a PDB (maxUnavailable 1): its nodes are consolidated, every pod ends Running, the PDB is never violated, and the cluster costs less', async () => {
    const pool = `sd-${lh.id}`;
    const app = 'sd';
    try {
      // m5.large has 1500m allocatable here: two 700m pods per node, ten pods on five nodes
      await kit.createPool(pool, { disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: 'Never', budgets: [{ nodes: '100%' }] } });
      await kit.policy.createNamespacedPodDisruptionBudget({ namespace, body: { metadata: { name: app }, spec: { maxUnavailable: 1, selector: { matchLabels: { app } } } } });
      await kit.deploy(app, { replicas: 10, pool, cpu: '700m' });
      const full = await eventually('ten pods Running on initialized nodes', async () => {
        const claims = await kit.claimsOf(pool);
        const pods = await kit.podsOf(app);
        const nodes = new Set(claims.map((c) => c.status?.nodeName));
        return claims.length >= 5 && claims.every(initialized) && pods.length === 10 && pods.every(isRunningOn(nodes)) ? { claims, pods } : undefined;
      }, 300_000);
      const costFull = onDemandCostPerHour(full.claims);

      // The ReplicaSet deletes the cheapest pods first: keep one pod on each of four nodes, so
      // that the scale-down leaves four half-empty nodes (and an empty one) and consolidation
      // has to move pods — through evictions, which the PDB governs.
      const keep = [...new Map(full.pods.map((p) => [p.spec!.nodeName!, p])).values()].slice(0, 4);
      expect(keep).toHaveLength(4);
      for (const p of keep) await lh.guest.core.patchNamespacedPod({ namespace, name: p.metadata!.name!, body: { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '1000' } } } }, mergePatch);
      await kit.scale(app, 4);
      const watch = await watchAvailability(namespace, app);
      try {
        const settled = await eventually('the scale-down done: four pods, all healthy, the PDB allowing one disruption', async () => {
          const pdb = await kit.policy.readNamespacedPodDisruptionBudget({ namespace, name: app });
          const pods = [...watch.pods().values()];
          const s = pdb.status;
          return pods.length === 4 && watch.healthy() === 4 && s?.observedGeneration === pdb.metadata?.generation && s?.expectedPods === 4 && s?.currentHealthy === 4 && s?.desiredHealthy === 3 && s?.disruptionsAllowed === 1 ? pods : undefined;
        }, 120_000);
        expect(new Set(settled.map((p) => p.node)).size).toBe(4);
        const before = await kit.claimsOf(pool);
        const costBefore = onDemandCostPerHour(before);
        expect(costBefore).toBe(costFull);

        // from here every eviction is consolidation's: the PDB must hold at every event
        watch.startRecording();
        const commandsBefore = (await status()).commands;
        let pdbLowest = Number.POSITIVE_INFINITY;
        let pdbLowestAt: V1PodDisruptionBudget['status'];
        await kit.patchPool(pool, { disruption: { consolidateAfter: '5s' } });
        await disruption.signal('disruptNow');

        const after = await eventually('two nodes left, running the four pods', async () => {
          const pdb = await kit.policy.readNamespacedPodDisruptionBudget({ namespace, name: app });
          if (pdb.status && pdb.status.observedGeneration === pdb.metadata?.generation && pdb.status.currentHealthy - pdb.status.desiredHealthy < pdbLowest) {
            pdbLowest = pdb.status.currentHealthy - pdb.status.desiredHealthy;
            pdbLowestAt = pdb.status;
          }
          const claims = await kit.claimsOf(pool);
          const pods = await kit.podsOf(app);
          const nodes = new Set(claims.map((c) => c.status?.nodeName));
          return claims.length === 2 && claims.every(initialized) && claims.every((c) => c.metadata.deletionTimestamp === undefined) && pods.length === 4 && pods.every(isRunningOn(nodes)) ? claims : undefined;
        }, 360_000).catch(async (err: unknown) => {
          console.log(`status: ${JSON.stringify(await status())}`);
          throw err;
        });

        // no PodDisruptionBudget violated: never fewer than desiredHealthy (3) healthy pods,
        // and every pod that left a node left through the Eviction API
        expect(watch.fewestHealthy()).toEqual(expect.objectContaining({ healthy: expect.any(Number) }));
        expect(watch.fewestHealthy()!.healthy).toBeGreaterThanOrEqual(3);
        expect(pdbLowest).toBeGreaterThanOrEqual(0);
        expect(pdbLowestAt).toBeDefined();
        expect(watch.deletedWithoutEviction()).toEqual([]);
        // at least two pods had to move (four one-pod nodes into two two-pod nodes)
        expect(watch.evicted().length).toBeGreaterThanOrEqual(2);

        // cheaper: two m5.large for four pods instead of five
        const costAfter = onDemandCostPerHour(after);
        expect(costAfter).toBeLessThan(costBefore);
        expect(costAfter).toBeCloseTo(2 * bundledOnDemandPrices().onDemand['m5.large']!, 6);
        const deployment = await kit.apps.readNamespacedDeployment({ namespace, name: app });
        expect(deployment.status?.availableReplicas).toBe(4);
        const done = await eventually('the consolidation command recorded', async () => {
          const s = await status();
          return s.inFlight === undefined && s.lastCommand?.command.method === 'consolidation' ? s : undefined;
        }, 60_000);
        expect(done.lastCommand).toEqual(expect.objectContaining({ outcome: 'done', command: expect.objectContaining({ method: 'consolidation', reason: 'Underutilized' }) }));
        // The empty node goes by emptiness first when a round sees it empty; a round that still
        // sees its last pod terminating leaves it to the multi-node command, which takes it
        // with the others (one command, as Karpenter's multi-node may). Either way, commands ran.
        expect(done.commands - commandsBefore).toBeGreaterThanOrEqual(1);
        for (const c of before.filter((b) => !after.some((a) => a.metadata.name === b.metadata.name))) {
          expect(await lh.instanceState(instanceIdOf(c)!)).toMatch(/shutting-down|terminated/);
        }
        console.log(`scale-down: $${costFull}/h → $${costAfter}/h; evicted ${watch.evicted().length} pod(s); fewest healthy ${JSON.stringify(watch.fewestHealthy())}; PDB lowest currentHealthy−desiredHealthy ${pdbLowest}; last command: ${done.lastCommand?.command.summary}`);
      } finally {
        await watch.stop();
      }
    } finally {
      await kit.removePool(pool, app);
      await kit.policy.deleteNamespacedPodDisruptionBudget({ namespace, name: app }).catch(() => undefined);
    }
  });

  it('expireAfter: 2m → the node is drained and terminated when it expires, and its pod ends Running on a new node', async () => {
    const pool = `exp-${lh.id}`;
    const app = 'exp';
    try {
      await kit.createPool(pool, { disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never', budgets: [{ nodes: '1' }] }, expireAfter: '2m' });
      await kit.deploy(app, { replicas: 1, pool });
      const first = await eventually('one initialized node running the pod', async () => {
        const claims = await kit.claimsOf(pool);
        const pods = await kit.podsOf(app);
        return claims.length === 1 && initialized(claims[0]!) && pods.length === 1 && pods.every(isRunningOn(new Set([claims[0]!.status?.nodeName]))) ? claims[0] : undefined;
      }, 240_000);
      expect(first!.spec.expireAfter).toBe('2m');
      const expireAt = Date.parse(first!.metadata.creationTimestamp!) + 120_000;
      const instance = instanceIdOf(first!)!;

      // nothing happens to it before it expires
      let endingSeenAt: number | undefined;
      const replacement = await eventually('the expired node replaced, the pod Running on the new one', async () => {
        const claims = await kit.claimsOf(pool);
        const old = claims.find((c) => c.metadata.name === first!.metadata.name);
        if (endingSeenAt === undefined && (old?.metadata.deletionTimestamp !== undefined || old?.status?.conditions?.some((x) => x.type === 'Drained') || (await taintedNodes([first!.status?.nodeName])).length > 0)) endingSeenAt = Date.now();
        const fresh = claims.filter((c) => c.metadata.name !== first!.metadata.name);
        const pods = await kit.podsOf(app);
        return !old && fresh.length === 1 && initialized(fresh[0]!) && pods.length === 1 && pods.every(isRunningOn(new Set([fresh[0]!.status?.nodeName]))) ? fresh[0] : undefined;
      }, expireAt - Date.now() + 180_000);

      // it ended at its expiry, not before, and said why
      expect(endingSeenAt).toBeDefined();
      expect(endingSeenAt!).toBeGreaterThanOrEqual(expireAt);
      expect(Date.parse(replacement!.metadata.creationTimestamp!)).toBeGreaterThanOrEqual(expireAt - 1_000);
      const events = await lh.guest.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${first!.metadata.name},reason=DisruptionTerminating` });
      expect(events.items.map((e) => e.message)).toContain('Draining and terminating: expireAfter elapsed');
      expect(await lh.instanceState(instance)).toMatch(/shutting-down|terminated/);
      // the new claim expires in its turn: two minutes from its own creation
      expect(replacement!.spec.expireAfter).toBe('2m');
      console.log(`expiry: ${first!.metadata.name} expired at ${new Date(expireAt).toISOString()}, ending seen ${endingSeenAt! - expireAt} ms later; ${replacement!.metadata.name} created ${Date.parse(replacement!.metadata.creationTimestamp!) - expireAt} ms after`);
    } finally {
      await kit.removePool(pool, app);
    }
  });

  it('an expired node whose drain a PDB holds counts as disrupting: budget nodes: "1" keeps the pool’s other, empty node until it is gone', async () => {
    const pool = `hold-${lh.id}`;
    try {
      await kit.createPool(pool, { disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never', budgets: [{ nodes: '1' }] }, expireAfter: '2m' });
      // the PDB refuses every eviction of the one "held" pod: the expired node drains for as long as it stands
      await kit.policy.createNamespacedPodDisruptionBudget({ namespace, body: { metadata: { name: 'held' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'held' } } } } });
      await kit.deploy('held', { replicas: 1, pool });
      const expiring = await eventually('one initialized node running the held pod', async () => {
        const claims = await kit.claimsOf(pool);
        const pods = await kit.podsOf('held');
        return claims.length === 1 && initialized(claims[0]!) && pods.length === 1 && pods.every(isRunningOn(new Set([claims[0]!.status?.nodeName]))) ? claims[0] : undefined;
      }, 240_000);
      const expireAt = Date.parse(expiring!.metadata.creationTimestamp!) + 120_000;
      // a second node of the same pool, a minute younger (it expires a minute later), then emptied
      await sleep(Math.max(0, expireAt - 60_000 - Date.now()));
      await kit.deploy('spare', { replicas: 1, pool });
      const spare = await eventually('a second initialized node running the spare pod', async () => {
        const claims = await kit.claimsOf(pool);
        const other = claims.find((c) => c.metadata.name !== expiring!.metadata.name);
        const pods = await kit.podsOf('spare');
        return other && initialized(other) && pods.length === 1 && pods.every(isRunningOn(new Set([other.status?.nodeName]))) ? other : undefined;
      }, 120_000);
      await kit.scale('spare', 0);
      await eventually('the spare node empty', async () => ((await kit.podsOf('spare')).length === 0 ? true : undefined), 60_000);

      await eventually('the first node expired and draining, held by the PDB', async () => {
        const claim = (await kit.claimsOf(pool)).find((c) => c.metadata.name === expiring!.metadata.name);
        return claim?.status?.conditions?.some((x) => x.type === 'Drained' && x.status === 'False' && x.message?.includes('PodDisruptionBudget')) ? true : undefined;
      }, expireAt - Date.now() + 60_000);
      // now the empty node may go as far as consolidateAfter goes; the budget is what holds it
      await kit.patchPool(pool, { disruption: { consolidateAfter: '5s' } });
      await disruption.signal('disruptNow');
      const seen: string[] = [];
      let reason: Blocked | undefined;
      for (const until = Date.now() + 20_000; Date.now() < until; await sleep(1_000)) {
        const claims = await kit.claimsOf(pool);
        const now = claims.find((c) => c.metadata.name === spare!.metadata.name);
        if (!now || now.metadata.deletionTimestamp !== undefined) seen.push(`the spare claim deleted at ${new Date().toISOString()}`);
        if ((await taintedNodes([spare!.status?.nodeName])).length > 0) seen.push(`the spare node tainted at ${new Date().toISOString()}`);
        reason = (await status()).blocked.find((b) => b.nodeClaim === spare!.metadata.name) ?? reason;
      }
      expect(seen).toEqual([]);
      expect(reason).toEqual({ nodeClaim: spare!.metadata.name, method: 'emptiness', reason: 'budget allows 1 Empty disruption(s) and 1 node(s) are already disrupting' });

      // the PDB lifted: the expired node drains and goes, and its pod lands on the node the budget kept
      await kit.policy.deleteNamespacedPodDisruptionBudget({ namespace, name: 'held' });
      await eventually('the expired node gone, the held pod Running on the spare node', async () => {
        const claims = await kit.claimsOf(pool);
        const pods = await kit.podsOf('held');
        return !claims.some((c) => c.metadata.name === expiring!.metadata.name) && pods.length === 1 && pods.every(isRunningOn(new Set([spare!.status?.nodeName]))) ? true : undefined;
      }, 120_000);
      expect(await lh.instanceState(instanceIdOf(expiring!)!)).toMatch(/shutting-down|terminated/);
    } finally {
      await kit.apps.deleteNamespacedDeployment({ namespace, name: 'spare' }).catch(() => undefined);
      await kit.policy.deleteNamespacedPodDisruptionBudget({ namespace, name: 'held' }).catch(() => undefined);
      await kit.removePool(pool, 'held');
    }
  });

  it('a budget of nodes: "0" with a schedule holds emptiness and drift during its window, and only then', async () => {
    const pool = `win-${lh.id}`;
    const app = 'win';
    try {
      await kit.createPool(pool, { disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never', budgets: [{ nodes: '1' }] }, labels: { 'example.com/rev': '1' } });
      await kit.deploy(app, { replicas: 2, pool });
      const before = await eventually('two initialized nodes running the pods', async () => {
        const claims = await kit.claimsOf(pool);
        const pods = await kit.podsOf(app);
        const nodes = new Set(claims.map((c) => c.status?.nodeName));
        return claims.length === 2 && claims.every(initialized) && pods.length === 2 && pods.every(isRunningOn(nodes)) ? claims : undefined;
      }, 240_000);
      const names = before.map((c) => c.metadata.name);
      const nodeNames = before.map((c) => c.status?.nodeName);

      // A window that opened at the start of this minute and lasts 2m (cron is minute-grained, UTC):
      // 60–120 s of it are left. Both nodes drift (a template label) and one is emptied.
      const opened = new Date(Math.floor(Date.now() / 60_000) * 60_000);
      const windowEnd = opened.getTime() + 120_000;
      const schedule = `${opened.getUTCMinutes()} ${opened.getUTCHours()} * * *`;
      await kit.patchPool(pool, { disruption: { consolidateAfter: '5s', budgets: [{ nodes: '0', schedule, duration: '2m' }] }, template: { metadata: { labels: { 'example.com/rev': '2' } } } });
      await kit.scale(app, 1);
      const commandsBefore = (await status()).commands;

      // while the window is open: nothing tainted, deleted or launched; the status says why
      const blocked = new Map<string, Blocked>();
      const during: string[] = [];
      while (Date.now() < windowEnd - 1_500) {
        const claims = await kit.claimsOf(pool);
        const pods = await kit.podsOf(app);
        if (claims.some((c) => !names.includes(c.metadata.name))) during.push(`a claim launched at ${new Date().toISOString()}`);
        if (claims.some((c) => c.metadata.deletionTimestamp !== undefined)) during.push(`a claim deleting at ${new Date().toISOString()}`);
        const tainted = await taintedNodes(nodeNames);
        if (tainted.length > 0) during.push(`${tainted.join(', ')} tainted at ${new Date().toISOString()}`);
        if (pods.filter((p) => p.metadata?.deletionTimestamp === undefined).length === 1) for (const b of (await status()).blocked) blocked.set(`${b.nodeClaim}/${b.method}`, b);
        await sleep(1_000);
      }
      expect(during).toEqual([]);
      const left = await kit.podsOf(app);
      expect(left).toHaveLength(1);
      const busy = before.find((c) => c.status?.nodeName === left[0]!.spec?.nodeName)!;
      const empty = before.find((c) => c !== busy)!;
      expect(busy).toBeDefined();
      const window = `(schedule ${JSON.stringify(schedule)} for 2m)`;
      expect([...blocked.values()]).toEqual(
        expect.arrayContaining([
          { nodeClaim: empty.metadata.name, method: 'emptiness', reason: `budget allows 0 Empty disruptions now ${window}` },
          { nodeClaim: busy.metadata.name, method: 'drift', reason: `budget allows 0 Drifted disruptions now ${window}` },
        ]),
      );
      const events = await lh.guest.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${busy.metadata.name},reason=DisruptionBlocked` });
      expect(events.items.map((e) => e.message)).toContain(`Cannot disrupt NodeClaim: budget allows 0 Drifted disruptions now ${window}`);

      // after it: the empty node goes, the drifted one is replaced
      let firstActionAt: number | undefined;
      const after = await eventually('the empty node gone and the busy one replaced by a rev-2 node running the pod', async () => {
        const claims = await kit.claimsOf(pool);
        if (firstActionAt === undefined && (claims.some((c) => !names.includes(c.metadata.name) || c.metadata.deletionTimestamp !== undefined) || claims.length < 2 || (await taintedNodes(nodeNames)).length > 0)) firstActionAt = Date.now();
        const pods = await kit.podsOf(app);
        return claims.length === 1 && !names.includes(claims[0]!.metadata.name) && initialized(claims[0]!) && pods.length === 1 && pods.every(isRunningOn(new Set([claims[0]!.status?.nodeName]))) ? claims[0] : undefined;
      }, 300_000).catch(async (err: unknown) => {
        console.log(`status: ${JSON.stringify(await status())}`);
        throw err;
      });
      expect(firstActionAt).toBeDefined();
      expect(firstActionAt!).toBeGreaterThanOrEqual(windowEnd);
      expect(after!.metadata.labels?.['example.com/rev']).toBe('2');
      const done = await eventually('both commands recorded', async () => {
        const s = await status();
        return s.inFlight === undefined && s.commands - commandsBefore >= 2 ? s : undefined;
      }, 60_000);
      expect(done.lastCommand).toEqual(expect.objectContaining({ outcome: 'done', command: expect.objectContaining({ method: 'drift', reason: 'Drifted', replace: true }) }));
      console.log(`window: ${schedule} for 2m, closed ${new Date(windowEnd).toISOString()}; first disruption seen ${firstActionAt! - windowEnd} ms after`);
    } finally {
      await kit.removePool(pool, app);
    }
  });
});
