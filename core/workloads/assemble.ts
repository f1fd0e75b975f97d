// Manifests → the packing input, for `autonode plan`. Pure: the caller reads the files
// and passes their text, the clock reading and the region. Every document that cannot
// be used is reported in `diagnostics` and skipped; the rest is still planned.
import { parseManifests } from '../api/manifests';
import { normaliseDocument } from '../api/normalise';
import type { EC2NodeClass } from '../api/ec2nodeclass';
import type { NodeClaim } from '../api/nodeclaim';
import type { NodePool } from '../api/nodepool';
import { catalogInstanceTypes, ephemeralVolumeSize, type AmiFamily, type CatalogResult, type KubeletSettings } from '../instancetypes';
import { LabelKey } from '../scheduling/labels';
import type { BoundPod, ExistingNodeInput, InFlightClaimInput, NodePoolInput, PackingInput, PendingPod, DaemonSetInput } from '../packing/input';
import { expandWorkload } from './expand';

export interface ManifestFile {
  readonly path: string;
  readonly text: string;
}

/** What a NodePool's instance types depend on: its node class's AMI family, kubelet and root volume. */
export interface CatalogQuery {
  readonly nodeClassName: string;
  readonly amiFamily: AmiFamily;
  readonly kubelet?: KubeletSettings | undefined;
  readonly rootVolumeSize?: string | undefined;
}

/**
 * Where instance types come from: the bundled offline catalog (`autonode plan`, the
 * default) or the cloud provider's, read ahead by the provisioner's activity. Both build
 * their types with core/instancetypes (one normalisation, labels, allocatable model).
 */
export type CatalogPort = (query: CatalogQuery) => CatalogResult;

export interface AssembleOptions {
  readonly region: string;
  readonly now: number;
  readonly catalog?: CatalogPort;
}

/** One object to plan with, and where it came from (for diagnostics). */
export interface ObjectDocument {
  readonly where: string;
  readonly object: unknown;
}

export interface Assembled {
  readonly input: PackingInput;
  /** One line per skipped document or assumption, "file:line: Kind/name: why". */
  readonly diagnostics: string[];
}

function amiFamilyOf(nodeClass: EC2NodeClass | undefined): AmiFamily | { unsupported: string } {
  const declared = nodeClass?.spec.amiFamily;
  const alias = nodeClass?.spec.amiSelectorTerms?.find((t) => 'alias' in t && typeof t.alias === 'string');
  const fromAlias = alias !== undefined && 'alias' in alias && typeof alias.alias === 'string' ? alias.alias.split('@')[0] : undefined;
  const family = declared ?? ({ al2: 'AL2', al2023: 'AL2023', bottlerocket: 'Bottlerocket' } as Record<string, AmiFamily | undefined>)[fromAlias ?? ''] ?? 'AL2023';
  if (family === 'AL2' || family === 'AL2023' || family === 'Bottlerocket' || family === 'Custom') return family;
  return { unsupported: family };
}

/** The kubelet fields that change allocatable, only those set (an absent key, never an undefined one). */
function allocatableSettings(kubelet: NonNullable<EC2NodeClass['spec']['kubelet']>): KubeletSettings {
  const { maxPods, podsPerCore, systemReserved, kubeReserved, evictionHard, evictionSoft } = kubelet;
  return {
    ...(maxPods !== undefined ? { maxPods } : {}),
    ...(podsPerCore !== undefined ? { podsPerCore } : {}),
    ...(systemReserved !== undefined ? { systemReserved } : {}),
    ...(kubeReserved !== undefined ? { kubeReserved } : {}),
    ...(evictionHard !== undefined ? { evictionHard } : {}),
    ...(evictionSoft !== undefined ? { evictionSoft } : {}),
  };
}

/** The catalog query a node class implies, or why it cannot be planned with. */
export function catalogQueryFor(nodeClassName: string, nodeClass: EC2NodeClass | undefined): CatalogQuery | { unsupported: string } {
  const family = amiFamilyOf(nodeClass);
  if (typeof family !== 'string') return family;
  const kubelet = nodeClass?.spec.kubelet;
  return {
    nodeClassName, amiFamily: family,
    kubelet: kubelet === undefined ? undefined : allocatableSettings(kubelet),
    rootVolumeSize: ephemeralVolumeSize(nodeClass?.spec.blockDeviceMappings),
  };
}

function bundledCatalog(options: AssembleOptions): CatalogPort {
  return (query) => catalogInstanceTypes({ region: options.region, amiFamily: query.amiFamily, now: options.now, kubelet: query.kubelet, rootVolumeSize: query.rootVolumeSize });
}

function poolInput(pool: NodePool, nodeClasses: ReadonlyMap<string, EC2NodeClass>, options: AssembleOptions, diagnostics: string[]): NodePoolInput | undefined {
  const name = pool.metadata.name ?? pool.metadata.generateName ?? '';
  const classRef = pool.spec.template.spec.nodeClassRef.name;
  const nodeClass = nodeClasses.get(classRef);
  if (nodeClass === undefined) diagnostics.push(`NodePool/${name}: EC2NodeClass ${classRef} not in the input; assuming AL2023 defaults`);
  const query = catalogQueryFor(classRef, nodeClass);
  if ('unsupported' in query) {
    diagnostics.push(`NodePool/${name}: skipped: amiFamily ${query.unsupported} is not supported for planning`);
    return undefined;
  }
  const catalog = (options.catalog ?? bundledCatalog(options))(query);
  if (!catalog.ok) {
    diagnostics.push(`NodePool/${name}: skipped: ${catalog.reason}`);
    return undefined;
  }
  diagnostics.push(...catalog.warnings.map((w) => `NodePool/${name}: ${w}`));
  const spec = pool.spec.template.spec;
  return {
    name, weight: pool.spec.weight ?? 0,
    requirements: spec.requirements.map((r) => ({ key: r.key, operator: r.operator, values: r.values, minValues: r.minValues })),
    labels: pool.spec.template.metadata?.labels ?? {},
    taints: spec.taints ?? [], startupTaints: spec.startupTaints ?? [],
    limits: pool.spec.limits ?? {}, usage: pool.status?.resources ?? {},
    // The catalog's types are readonly; the solver input is plain mutable JSON.
    instanceTypes: catalog.instanceTypes.map((t) => ({ name: t.name, labels: { ...t.labels }, capacity: { ...t.capacity }, allocatable: { ...t.allocatable }, offerings: t.offerings.map((o) => ({ ...o })) })),
  };
}

export function assemblePlanInput(files: readonly ManifestFile[], options: AssembleOptions): Assembled {
  const diagnostics: string[] = [];
  const documents: ObjectDocument[] = [];
  for (const file of files) {
    for (const document of parseManifests(file.text)) {
      const where = `${file.path}:${document.line ?? '?'}: ${document.kind ?? '?'}/${document.name ?? '?'}`;
      if (document.status === 'error') diagnostics.push(`${where}: invalid YAML, skipped: ${document.error}`);
      else documents.push({ where, object: document.object });
    }
  }
  const assembled = assembleObjects(documents, options);
  return { input: assembled.input, diagnostics: [...diagnostics, ...assembled.diagnostics] };
}

/**
 * Kubernetes objects → the packing input: Karpenter objects normalised, workloads
 * expanded, pods bound to nodes and claims attached to them. The provisioner passes the
 * live cluster's objects (and its cloud catalog); `autonode plan` the manifests' objects.
 */
export function assembleObjects(documents: readonly ObjectDocument[], options: AssembleOptions): Assembled {
  const diagnostics: string[] = [];
  const pods: PendingPod[] = [];
  const pendingKeys = new Set<string>();
  const daemonSets: DaemonSetInput[] = [];
  const nodes: ExistingNodeInput[] = [];
  const bound: { nodeName: string; pod: BoundPod }[] = [];
  const nodePools: NodePool[] = [];
  const nodeClaims: NodeClaim[] = [];
  const nodeClasses = new Map<string, EC2NodeClass>();

  for (const document of documents) {
    {
      const where = document.where;
      const karpenter = normaliseDocument(document.object);
      switch (karpenter.status) {
        case 'ok':
          diagnostics.push(...karpenter.warnings.map((w) => `${where}: ${JSON.stringify(w)}`));
          for (const object of karpenter.objects) {
            if (object.kind === 'NodePool') nodePools.push(object);
            else if (object.kind === 'NodeClaim') nodeClaims.push(object);
            else nodeClasses.set(object.metadata.name ?? '', object);
          }
          continue;
        case 'invalid':
          diagnostics.push(`${where}: invalid, skipped: ${karpenter.issues.map((i) => `${i.path}: ${i.message}. Fix: ${i.fix}`).join('; ')}`);
          continue;
        case 'unsupported':
          diagnostics.push(`${where}: skipped: ${karpenter.reason}`);
          continue;
        case 'other':
          break;
      }
      const workload = expandWorkload(document.object);
      switch (workload.kind) {
        case 'pending':
          for (const pod of workload.pods) {
            // Two pods of one name would make the plan ambiguous: the solver keeps the first.
            const key = `${pod.namespace}/${pod.name}`;
            if (pendingKeys.has(key)) {
              diagnostics.push(`${where}: pod ${key} is already in the input; this one is skipped`);
              continue;
            }
            pendingKeys.add(key);
            pods.push(pod);
          }
          break;
        case 'bound': bound.push({ nodeName: workload.nodeName, pod: workload.pod }); break;
        case 'daemonSet': daemonSets.push(workload.daemonSet); break;
        case 'node': nodes.push(workload.node); break;
        case 'skipped': diagnostics.push(`${where}: skipped: ${workload.reason}`); break;
        case 'invalid': diagnostics.push(`${where}: invalid, skipped: ${workload.reason}`); break;
        case 'other': diagnostics.push(`${where}: ignored: not an object autonode plans with`); break;
      }
    }
  }

  const nodeNames = new Set(nodes.map((n) => n.name));
  const inFlightClaims: InFlightClaimInput[] = nodeClaims
    .filter((c) => c.status?.nodeName === undefined || !nodeNames.has(c.status.nodeName))
    .map((c) => ({
      name: c.metadata.name ?? c.metadata.generateName ?? '',
      nodePool: c.metadata.labels?.[LabelKey.nodePool] ?? '',
      requirements: c.spec.requirements.map((r) => ({ key: r.key, operator: r.operator, values: r.values, minValues: r.minValues })),
      labels: c.metadata.labels ?? {},
      taints: c.spec.taints ?? [],
      ...(c.status?.allocatable === undefined ? {} : { allocatable: c.status.allocatable }),
      pods: [],
    }));
  const byName = new Map<string, { pods: BoundPod[] }>([...nodes, ...inFlightClaims].map((n) => [n.name, n]));
  for (const claim of nodeClaims) {
    const target = byName.get(claim.metadata.name ?? '');
    if (target !== undefined && claim.status?.nodeName !== undefined) byName.set(claim.status.nodeName, target);
  }
  for (const { nodeName, pod } of bound) {
    const target = byName.get(nodeName);
    if (target === undefined) diagnostics.push(`Pod/${pod.namespace}/${pod.name}: bound to ${nodeName}, which is not in the input; ignored`);
    else target.pods.push(pod);
  }

  const pools = nodePools.flatMap((pool) => poolInput(pool, nodeClasses, options, diagnostics) ?? []);
  return {
    input: { pods, daemonSets, existingNodes: nodes, inFlightClaims, nodePools: pools, now: options.now, maxInstanceTypes: 60 },
    diagnostics,
  };
}
