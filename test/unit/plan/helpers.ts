// Shared pieces of the `autonode plan` tests: manifest builders (YAML text, as a user
// would write it), an in-memory PlanIo, and the contract's JSON document as a type.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runPlan, type PlanIo } from '../../../starter/commands/plan';

export const SEEDS = join(__dirname, '..', '..', 'fixtures', 'seeds');
export const seed = (file: string): string => readFileSync(join(SEEDS, file), 'utf8');

/** A fixed clock: plans are reproducible. */
export const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

// ---------------------------------------------------------------------------------------
// The contract's document (ARCHITECTURE.md, "The `autonode plan` contract").

export interface PlanDocNodeClaim {
  name: string;
  nodePool: string;
  instanceType: string;
  zone: string;
  capacityType: string;
  price: number;
  instanceTypeOptions: string[];
  labels: Record<string, string>;
  taints: { key: string; value?: string; effect: string }[];
  allocatable: Record<string, string>;
  pods: string[];
}

export interface PlanDoc {
  nodeClaims: PlanDocNodeClaim[];
  existingNodes: { name: string; pods: string[] }[];
  inFlightNodeClaims: { name: string; pods: string[] }[];
  unschedulable: { pod: string; reason: string }[];
  totalPrice: number;
}

export const DOCUMENT_KEYS = ['nodeClaims', 'existingNodes', 'inFlightNodeClaims', 'unschedulable', 'totalPrice'];
export const NODECLAIM_KEYS = ['name', 'nodePool', 'instanceType', 'zone', 'capacityType', 'price', 'instanceTypeOptions', 'labels', 'taints', 'allocatable', 'pods'];

/** Every pod the plan mentions, from all four sections, in document order (duplicates kept). */
export function collectPods(doc: PlanDoc): string[] {
  return [
    ...doc.nodeClaims.flatMap((c) => c.pods),
    ...doc.existingNodes.flatMap((n) => n.pods),
    ...doc.inFlightNodeClaims.flatMap((c) => c.pods),
    ...doc.unschedulable.map((u) => u.pod),
  ];
}

/** Where the plan put one pod: "claim:<pool>", "existing:<node>", "inFlight:<claim>" or "unschedulable". */
export function placementOf(doc: PlanDoc, pod: string): string[] {
  return [
    ...doc.nodeClaims.filter((c) => c.pods.includes(pod)).map((c) => `claim:${c.nodePool}`),
    ...doc.existingNodes.filter((n) => n.pods.includes(pod)).map((n) => `existing:${n.name}`),
    ...doc.inFlightNodeClaims.filter((c) => c.pods.includes(pod)).map((c) => `inFlight:${c.name}`),
    ...doc.unschedulable.filter((u) => u.pod === pod).map(() => 'unschedulable'),
  ];
}

/** The contract's invariant: each pending pod exactly once, and no other pod at all. */
export function expectEachPendingPodOnce(doc: PlanDoc, pending: readonly string[]): void {
  const seen = collectPods(doc);
  const duplicates = seen.filter((pod, i) => seen.indexOf(pod) !== i);
  expect(duplicates).toEqual([]);
  expect([...seen].sort()).toEqual([...pending].sort());
}

// ---------------------------------------------------------------------------------------
// Running the command in memory.

export interface PlanRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runPlanOn(files: Readonly<Record<string, string>>, options: { output?: string; region?: string; io?: Partial<PlanIo>; file?: string[] } = {}): PlanRun {
  let stdout = '';
  let stderr = '';
  const code = runPlan(
    { file: options.file ?? Object.keys(files), output: options.output ?? 'json', region: options.region ?? 'us-east-1' },
    {
      stdout: (text) => { stdout += text; },
      stderr: (text) => { stderr += text; },
      readFile: (path) => {
        const text = files[path];
        if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
        return text;
      },
      now: NOW,
      ...options.io,
    },
  );
  return { code, stdout, stderr };
}

/** Runs `plan -o json` and parses stdout; fails the test when the run is not a success. */
export function planJson(files: Readonly<Record<string, string>>, options: { region?: string; io?: Partial<PlanIo> } = {}): { doc: PlanDoc; stderr: string; stdout: string } {
  const run = runPlanOn(files, { ...options, output: 'json' });
  if (run.code !== 0) throw new Error(`autonode plan exited ${run.code}: ${run.stderr}`);
  return { doc: JSON.parse(run.stdout) as PlanDoc, stderr: run.stderr, stdout: run.stdout };
}

// ---------------------------------------------------------------------------------------
// Manifest builders. Each returns one YAML document; `yamlStream` joins them.

export const yamlStream = (...documents: string[]): string => documents.join('---\n');

type Requirement = { key: string; operator: string; values?: string[] };
type Taint = { key: string; value?: string; effect: string };
type Toleration = { key?: string; operator?: string; value?: string; effect?: string };
type Requests = Record<string, string>;

export function nodePoolV1(name: string, options: { requirements?: Requirement[]; taints?: Taint[]; nodeClass?: string; weight?: number } = {}): string {
  return stringify({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      ...(options.weight === undefined ? {} : { weight: options.weight }),
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: options.nodeClass ?? 'default' },
          requirements: options.requirements ?? [],
          ...(options.taints === undefined ? {} : { taints: options.taints }),
        },
      },
    },
  });
}

export const onDemand = (...types: string[]): Requirement[] => [
  { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
  { key: 'node.kubernetes.io/instance-type', operator: 'In', values: types },
];

export function ec2NodeClassV1(name = 'default'): string {
  return stringify({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name },
    spec: {
      role: 'KarpenterNodeRole-test',
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'test' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'test' } }],
    },
  });
}

interface PodOptions {
  namespace?: string;
  requests?: Requests;
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  phase?: string;
}

function podSpec(options: PodOptions): Record<string, unknown> {
  return {
    ...(options.nodeName === undefined ? {} : { nodeName: options.nodeName }),
    ...(options.nodeSelector === undefined ? {} : { nodeSelector: options.nodeSelector }),
    ...(options.tolerations === undefined ? {} : { tolerations: options.tolerations }),
    containers: [{ name: 'main', image: 'registry.example/app:1', resources: { requests: options.requests ?? { cpu: '100m', memory: '128Mi' } } }],
  };
}

export function pod(name: string, options: PodOptions = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(options.namespace === undefined ? {} : { namespace: options.namespace }) },
    spec: podSpec(options),
    ...(options.phase === undefined ? {} : { status: { phase: options.phase } }),
  });
}

export function replicated(kind: 'Deployment' | 'ReplicaSet' | 'StatefulSet', name: string, replicas: number | undefined, options: PodOptions = {}): string {
  return stringify({
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, ...(options.namespace === undefined ? {} : { namespace: options.namespace }) },
    spec: {
      ...(replicas === undefined ? {} : { replicas }),
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: podSpec(options) },
    },
  });
}

export function job(name: string, counts: { parallelism?: number; completions?: number }, options: PodOptions = {}): string {
  return stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, ...(options.namespace === undefined ? {} : { namespace: options.namespace }) },
    spec: { ...counts, template: { spec: { ...podSpec(options), restartPolicy: 'Never' } } },
  });
}

export function daemonSet(name: string, options: PodOptions = {}): string {
  return stringify({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: options.namespace ?? 'kube-system' },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec(options) } },
  });
}

export function node(name: string, allocatable: Requests | undefined, options: { labels?: Record<string, string>; taints?: Taint[] } = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...options.labels } },
    ...(options.taints === undefined ? {} : { spec: { taints: options.taints } }),
    ...(allocatable === undefined ? {} : { status: { allocatable, capacity: allocatable } }),
  });
}

export function nodeClaimV1(name: string, options: { nodePool?: string; requirements?: Requirement[]; allocatable?: Requests; nodeName?: string } = {}): string {
  const status = {
    ...(options.allocatable === undefined ? {} : { allocatable: options.allocatable, capacity: options.allocatable }),
    ...(options.nodeName === undefined ? {} : { nodeName: options.nodeName }),
  };
  return stringify({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name, labels: { 'karpenter.sh/nodepool': options.nodePool ?? 'default' } },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: options.requirements ?? [],
    },
    ...(Object.keys(status).length === 0 ? {} : { status }),
  });
}
