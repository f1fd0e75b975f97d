// Seed 000 ("Node Autoprovisioning", HyperShift) end to end: its v1beta1 NodePool and
// EC2NodeClass applied verbatim, subnets and security groups tagged as it tells admins
// to, 200 pending replicas of three shapes and a DaemonSet → every pod Running on spot
// nodes autonode launched in moto; and what was launched is what `autonode plan --ec2`
// prints for the same objects.
import { AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseManifests } from '../../core/api/manifests';
import { provisionerWorkflowId } from '../../core/lifecycle';
import { createClusterNetwork } from '../../dev/autonode/ec2-fixtures';
import { ec2CatalogFor, runPlan } from '../../starter/commands/plan';
import { loadLinearSolver } from '../../activities/packing/highs';
import { type ProvisionerStatus } from '../../workflows/provisioner';
import { watchWorkflowId } from '../../workflows/watch';
import { ZONES } from '../support/cloud';
import { recordedPlans } from '../support/histories';
import { eventually, startLifecycleHarness, type LifecycleHarness } from '../support/lifecycle';
import { uniqueNetworkOctet } from '../support/network';

jest.setTimeout(600_000);

const SEED = join(__dirname, '..', 'fixtures', 'seeds', '000-hypershift-nodepool-and-nodeclass.yaml');
const SHAPES = [
  { name: 'small', replicas: 100, cpu: '100m', memory: '128Mi' },
  { name: 'medium', replicas: 60, cpu: '250m', memory: '512Mi' },
  { name: 'large', replicas: 40, cpu: '500m', memory: '1Gi' },
] as const;
const REPLICAS = SHAPES.reduce((n, s) => n + s.replicas, 0);

describe('seed 000 verbatim: 200 pending replicas become spot nodes (real stack)', () => {
  let lh: LifecycleHarness;
  let apps: AppsV1Api;
  const namespace = `seed-${randomUUID().slice(0, 6)}`;
  const seedObjects = parseManifests(readFileSync(SEED, 'utf8')).flatMap((d) => (d.status === 'parsed' ? [d.object as { apiVersion: string; kind: string; metadata: { name: string } }] : []));
  const refOf = (o: { apiVersion: string; kind: string; metadata: { name: string } }) => {
    const [group = '', version = ''] = o.apiVersion.split('/');
    return { group, version, plural: o.kind === 'NodePool' ? 'nodepools' : 'ec2nodeclasses', name: o.metadata.name };
  };
  const workload = () =>
    [
      `apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: node-agent, namespace: ${namespace}}\nspec:\n  selector: {matchLabels: {app: node-agent}}\n  template:\n    metadata: {labels: {app: node-agent}}\n    spec:\n      tolerations: [{operator: Exists}]\n      containers: [{name: agent, image: registry.example/agent:1, resources: {requests: {cpu: 100m, memory: 128Mi}}}]\n`,
      ...SHAPES.map(
        (s) =>
          `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${s.name}, namespace: ${namespace}}\nspec:\n  replicas: ${s.replicas}\n  selector: {matchLabels: {app: ${s.name}}}\n  template:\n    metadata: {labels: {app: ${s.name}}}\n    spec:\n      containers: [{name: app, image: registry.example/app:1, resources: {requests: {cpu: ${s.cpu}, memory: ${s.memory}}}}]\n`,
      ),
    ].join('---\n');

  beforeAll(async () => {
    lh = await startLifecycleHarness();
    apps = lh.guest.config.makeApiClient(AppsV1Api);
    // "Make sure to tag your securityGroups and subnets": the seed's selector, as written.
    await createClusterNetwork(lh.h.direct, { clusterName: `seed-${lh.id}`, discoveryValue: 'your-infra-tag', zones: ZONES, octet: uniqueNetworkOctet() });
    const cluster = { name: lh.h.cluster.name, region: lh.h.cluster.region };
    for (const object of seedObjects) {
      await lh.guest.customObjects.deleteClusterCustomObject(refOf(object)).catch(() => undefined);
      await eventually(`${object.kind} ${object.metadata.name} gone`, async () => {
        try {
          await lh.guest.customObjects.getClusterCustomObject(refOf(object));
          return false;
        } catch {
          return true;
        }
      });
      const { name: _name, ...ref } = refOf(object);
      await lh.guest.customObjects.createClusterCustomObject({ ...ref, body: object });
    }
    await lh.guest.core.createNamespace({ body: { metadata: { name: namespace } } });
    for (const doc of parseManifests(workload())) {
      if (doc.status !== 'parsed') throw new Error('the test workload does not parse');
      if (doc.kind === 'DaemonSet') await apps.createNamespacedDaemonSet({ namespace, body: doc.object as never });
      else await apps.createNamespacedDeployment({ namespace, body: doc.object as never });
    }
    // autonode starts once every replica is pending, so its first batch sees the whole
    // workload: one plan to compare with `autonode plan` (however slowly the controller-manager
    // made the pods).
    await eventually('every replica Unschedulable', async () => {
      const pods = (await lh.guest.core.listNamespacedPod({ namespace })).items.filter((p) => p.metadata?.labels?.app !== 'node-agent');
      return pods.length === REPLICAS && pods.every((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
    }, 180_000);
    await lh.t.client.workflow.start('watchWorkflow', {
      taskQueue: lh.taskQueues.control,
      workflowId: watchWorkflowId(cluster.name),
      args: [{ cluster, taskQueues: lh.taskQueues, gcInterval: 'Never' }],
    });
  });
  afterAll(async () => {
    if (lh) {
      await lh.guest.core.deleteNamespace({ name: namespace }).catch(() => undefined);
      for (const object of seedObjects) await lh.guest.customObjects.deleteClusterCustomObject(refOf(object)).catch(() => undefined);
      await lh.close();
    }
  });

  it('runs every pod on spot c/m/r xlarge nodes autonode launched, exactly as `autonode plan --ec2` plans them', async () => {
    const running = (pods: V1Pod[]) => pods.filter((p) => p.status?.phase === 'Running' && p.spec?.nodeName);
    const pods = await eventually('every replica Running', async () => {
      const all = (await lh.guest.core.listNamespacedPod({ namespace })).items.filter((p) => p.metadata?.labels?.app !== 'node-agent');
      return all.length === REPLICAS && running(all).length === REPLICAS ? all : undefined;
    }, 480_000);

    const claims = (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === 'spot-example');
    const nodes = new Map(claims.map((c) => [c.status?.nodeName, c]));
    for (const pod of pods) expect(nodes.has(pod.spec?.nodeName)).toBe(true);
    // the pool's requirements, as the nodes say
    for (const claim of claims) {
      const labels = claim.metadata.labels ?? {};
      expect(labels['karpenter.sh/capacity-type']).toBe('spot');
      expect(labels['kubernetes.io/arch']).toBe('amd64');
      expect(labels['karpenter.k8s.aws/instance-size']).toBe('xlarge');
      expect(['c', 'm', 'r']).toContain(labels['karpenter.k8s.aws/instance-category']);
      expect(Number(labels['karpenter.k8s.aws/instance-generation'])).toBeGreaterThan(4);
    }
    // the DaemonSet runs on every node autonode launched: the claims are listed again on each
    // try, as a later batch's claim may still be registering (no node name yet) when the
    // replicas are all Running
    await eventually('a node-agent Running on every launched node', async () => {
      const current = (await lh.claims.list()).filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === 'spot-example' && !c.metadata.deletionTimestamp);
      const unregistered = current.filter((c) => !c.status?.nodeName).map((c) => c.metadata.name);
      if (unregistered.length > 0) throw new Error(`claims without a node yet: ${unregistered.join(', ')}`);
      const agents = (await lh.guest.core.listNamespacedPod({ namespace, labelSelector: 'app=node-agent' })).items;
      const on = new Set(running(agents).map((p) => p.spec?.nodeName));
      const missing = current.map((c) => c.status?.nodeName ?? '').filter((n) => !on.has(n));
      if (missing.length === 0) return true;
      const phases = missing.map((n) => {
        const agent = agents.find((p) => p.spec?.nodeName === n || JSON.stringify(p.spec?.affinity ?? {}).includes(n));
        return `${n}: ${agent ? `${agent.metadata?.name} ${agent.status?.phase} ${agent.status?.conditions?.map((c) => `${c.type}=${c.status}${c.message ? ` (${c.message})` : ''}`).join(' ') ?? ''}` : 'no agent pod'}`;
      });
      throw new Error(`no Running node-agent on ${phases.join('; ')}`);
    }, 180_000);

    // what was launched: instance type and price of each claim's instance
    const catalog = await ec2CatalogFor([{ path: SEED, text: readFileSync(SEED, 'utf8') }], lh.h.provider);
    const types = catalog({ nodeClassName: 'default', amiFamily: 'Custom' });
    if (!types.ok) throw new Error(`no catalog: ${types.reason}`);
    const priceOf = (type: string, zone: string) => types.instanceTypes.find((t) => t.name === type)?.offerings.find((o) => o.zone === zone && o.capacityType === 'spot')?.price;
    const launched = claims.map((c) => ({ type: c.metadata.labels?.['node.kubernetes.io/instance-type'] ?? '', price: priceOf(c.metadata.labels?.['node.kubernetes.io/instance-type'] ?? '', c.metadata.labels?.['topology.kubernetes.io/zone'] ?? '') ?? NaN }));

    // `autonode plan --ec2` on the same objects, through the same catalog code
    let out = '';
    const code = runPlan(
      { file: [SEED, 'workload.yaml'], output: 'json', region: lh.h.cluster.region, ec2: true },
      {
        stdout: (t) => void (out += t),
        stderr: () => undefined,
        readFile: (path) => (path === SEED ? readFileSync(SEED, 'utf8') : workload()),
        now: Date.now(),
        linearSolver: await loadLinearSolver(),
        catalog,
      },
    );
    expect(code).toBe(0);
    const plan = JSON.parse(out) as { nodeClaims: { instanceType: string; price: number; pods: string[] }[]; unschedulable: unknown[] };
    expect(plan.unschedulable).toEqual([]);
    expect(plan.nodeClaims.reduce((n, c) => n + c.pods.length, 0)).toBe(REPLICAS);
    // the provisioner's first batch (recorded in its history) is `autonode plan`'s plan …
    const first = (await recordedPlans(lh.t.client, provisionerWorkflowId(lh.h.cluster.name)))[0];
    if (!first) {
      const history = await lh.t.client.workflow.getHandle(provisionerWorkflowId(lh.h.cluster.name)).fetchHistory();
      throw new Error(`no batch with claims in the provisioner history: ${JSON.stringify((history.events ?? []).map((e) => e.eventType))}`);
    }
    const planned = first.claims.map((c) => ({ name: c.name, type: first.optionLists[c.options]?.[0] ?? '', price: c.price }));
    expect(planned.map((c) => c.type).sort()).toEqual(plan.nodeClaims.map((c) => c.instanceType).sort());
    const sum = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) * 1e6) / 1e6;
    expect(sum(planned.map((c) => c.price))).toBeCloseTo(sum(plan.nodeClaims.map((c) => c.price)), 6);
    // … and each of its claims launched as planned: that type, at that price
    const launchedByName = new Map(claims.map((c, i) => [c.metadata.name, launched[i]]));
    for (const c of planned) expect({ name: c.name, ...launchedByName.get(c.name) }).toEqual({ name: c.name, type: c.type, price: c.price });
    // Claims of later batches are capacity for pods kube-scheduler placed differently from the
    // plan (it binds freely; issue 14 measures this): reported, not hidden.
    const later = claims.filter((c) => !planned.some((p) => p.name === c.metadata.name));
    if (later.length > 0) console.log(`seed 000: ${later.length} claim(s) beyond the first plan, for pods kube-scheduler placed elsewhere: ${later.map((c) => c.metadata.labels?.['node.kubernetes.io/instance-type']).join(', ')}`);
    // and the provisioner's own account of its batch agrees
    const status = await lh.t.client.workflow.getHandle(provisionerWorkflowId(lh.h.cluster.name)).query<ProvisionerStatus>('status');
    console.log(`seed 000: first plan ${planned.length} claims; ${claims.length} claims (${[...new Set(launched.map((l) => l.type))].join(', ')}), ${sum(launched.map((l) => l.price))} USD/h; plan ${plan.nodeClaims.length} claims ${sum(plan.nodeClaims.map((c) => c.price))} USD/h; last batch ${JSON.stringify(status.lastBatch && { pending: status.lastBatch.pending, created: status.lastBatch.created.length, pricePerHour: status.lastBatch.pricePerHour })}`);
  });
});
