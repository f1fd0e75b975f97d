import { type V1Node, type V1Taint } from '@kubernetes/client-node';
import { TERMINATION_FINALIZER } from '../../core/lifecycle';
import { DAEMONSET_GATE_ANNOTATION } from '../../core/provisioning/daemonset-gate';
import { type KubeClients } from './clients';
import { isConflict, isNotFound } from './errors';
import { type StoredNodeClaim } from './nodeclaims';

export const UNREGISTERED_TAINT_KEY = 'karpenter.sh/unregistered';
export const DISRUPTED_TAINT: V1Taint = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' };
/**
 * On a Node tainted DISRUPTED_TAINT by an actor other than its own NodeClaim's termination
 * or the disruption workflow's command (an interruption launching the replacement first):
 * until when that actor is moving it (ISO time). Past it, or without it, a taint found on a
 * node nothing is deleting is a leftover, and the disruption workflow's next round removes
 * it, as Karpenter removes taints of commands no longer in its orchestration queue.
 */
export const DISRUPTED_UNTIL_ANNOTATION = 'autonode.io/disrupted-until';
export const REGISTERED_LABEL = 'karpenter.sh/registered';
export const INITIALIZED_LABEL = 'karpenter.sh/initialized';
export const NODEPOOL_LABEL = 'karpenter.sh/nodepool';

/** Taints the kubelet or cloud controllers set while a node comes up (Karpenter's list). */
const EPHEMERAL_TAINT_KEYS = [
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.kubernetes.io/network-unavailable',
  'node.cloudprovider.kubernetes.io/uninitialized',
];
/** What the node lifecycle controller taints a cordoned node with (TaintNodesByCondition). */
const UNSCHEDULABLE_TAINT_KEY = 'node.kubernetes.io/unschedulable';
const STANDARD_RESOURCES = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);

const sameTaint = (a: V1Taint, b: { key: string; effect: string }) => a.key === b.key && a.effect === b.effect;

/** Per guest API client: the last Node listing and when it began, shared by registration polls. */
const nodeListings = new WeakMap<object, { at: number; listing: Promise<V1Node[]> }>();
const LISTING_REUSE_MS = 5_000;
const SYNC_ATTEMPTS = 5;

export interface NodeView {
  name: string;
  providerID?: string;
  ready: boolean;
  /** the Ready condition as the kubelet last posted it ('Missing' before it posts one) */
  readyCondition: { status: 'True' | 'False' | 'Unknown' | 'Missing'; since?: string };
  deleting: boolean;
  /** ISO time of the deletionTimestamp, when deleting */
  deletionTimestamp?: string;
  taints: V1Taint[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** spec.unschedulable (cordoned) */
  unschedulable: boolean;
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
}

function view(node: V1Node): NodeView {
  return {
    name: node.metadata?.name ?? '',
    ...(node.spec?.providerID ? { providerID: node.spec.providerID } : {}),
    ready: node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    readyCondition: readyConditionOf(node),
    deleting: node.metadata?.deletionTimestamp !== undefined,
    ...(node.metadata?.deletionTimestamp !== undefined ? { deletionTimestamp: isoOf(node.metadata.deletionTimestamp) } : {}),
    taints: node.spec?.taints ?? [],
    labels: node.metadata?.labels ?? {},
    annotations: node.metadata?.annotations ?? {},
    unschedulable: node.spec?.unschedulable === true,
    capacity: node.status?.capacity ?? {},
    allocatable: node.status?.allocatable ?? {},
  };
}

/** The client types say Date; a plain JSON read gives a string. */
function isoOf(value: unknown): string | undefined {
  return value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : undefined;
}

function readyConditionOf(node: V1Node): NodeView['readyCondition'] {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (!ready) return { status: 'Missing' };
  const status = ready.status === 'True' || ready.status === 'False' ? ready.status : 'Unknown';
  // the client types say Date; a plain JSON read gives a string
  const since: unknown = ready.lastTransitionTime;
  const iso = since instanceof Date ? since.toISOString() : typeof since === 'string' ? since : undefined;
  return { status, ...(iso ? { since: iso } : {}) };
}

export class NodeStore {
  constructor(private readonly kube: KubeClients) {}

  async get(name: string): Promise<NodeView | undefined> {
    try {
      return view(await this.kube.core.readNode({ name }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * Registration's look-up, polled by every registering claim: the Node named as the
   * instance's private DNS name (the name its kubelet registers under, and the only one
   * autonode approves a client certificate for) read directly; else the Node list, shared
   * by every claim of the cluster in this process for LISTING_REUSE_MS (a kubelet with
   * another name, approved by someone else). Listing every Node for every poll of every
   * claim was quadratic: 100 claims registering at once in `npm run scale` listed 100+
   * Nodes each, every poll. Gives the Node registered for `providerID`, and the one named
   * `expectedName` as read (the same Node, another machine's, or none).
   */
  async findRegistered(providerID: string, expectedName: string): Promise<{ node?: NodeView; named?: NodeView }> {
    const named = await this.get(expectedName);
    if (named?.providerID === providerID) return { node: named, named };
    const found = await this.findListed(providerID);
    // `named`, the Node under the expected name if any: when it is another machine's, it blocks this one (nodeclaim/kube.ts)
    return { ...(found ? { node: found } : {}), ...(named ? { named } : {}) };
  }

  private async findListed(providerID: string, maxAgeMs = LISTING_REUSE_MS): Promise<NodeView | undefined> {
    const node = (await this.nodeListing(maxAgeMs)).find((n) => n.spec?.providerID === providerID);
    return node ? view(node) : undefined;
  }

  /** The Node whose providerID is this instance's (the kubelet chose the name), listed now. */
  async findByProviderId(providerID: string): Promise<NodeView | undefined> {
    return this.findListed(providerID, 0);
  }

  /** The cluster's Nodes, from a listing shared by this process's claims when it is younger than `maxAgeMs`; a new one is shared in turn. */
  private nodeListing(maxAgeMs: number): Promise<V1Node[]> {
    const now = Date.now();
    const shared = nodeListings.get(this.kube.core);
    if (shared !== undefined && now - shared.at < maxAgeMs) return shared.listing;
    const entry = { at: now, listing: this.kube.core.listNode().then((l) => l.items) };
    nodeListings.set(this.kube.core, entry);
    // a failed listing is not kept: the next poll lists again
    entry.listing.catch(() => {
      if (nodeListings.get(this.kube.core) === entry) nodeListings.delete(this.kube.core);
    });
    return entry.listing;
  }

  /**
   * Registration: the Node takes the claim's labels, taints and startup taints (once —
   * a startup taint removed later by its daemon must stay removed), loses the
   * unregistered taint, and gains our finalizer and an owner reference to the claim.
   * Read-modify-write with the resourceVersion: a conflict fails and is retried.
   * `daemonSetGate` (an ISO time): on the first sync, cordon the node for its DaemonSet pods
   * (core/provisioning/daemonset-gate.ts) — unless it is cordoned already (not ours to lift).
   */
  async syncRegistered(claim: StoredNodeClaim, nodeName: string, options: { daemonSetGate?: string } = {}): Promise<NodeView> {
    // a kubelet updates its Node often while it comes up: `update` reads a conflict again
    // rather than failing the whole registration review (seen looping in `npm run scale`)
    return view(await this.update(nodeName, (node) => registeredNode(node, claim, options)));
  }

  /**
   * Uncordons a node autonode cordoned for its DaemonSet pods (and only such a node). The
   * cordon's taint goes in the same write: the node lifecycle controller would take it off
   * only after this write, and until then kube-scheduler would still refuse the node that
   * initialization is about to label ready for pods.
   */
  async liftDaemonSetGate(name: string): Promise<void> {
    await this.update(name, (node) => {
      const annotations = { ...node.metadata?.annotations };
      if (annotations[DAEMONSET_GATE_ANNOTATION] === undefined) return undefined;
      delete annotations[DAEMONSET_GATE_ANNOTATION];
      const taints = (node.spec?.taints ?? []).filter((t) => t.key !== UNSCHEDULABLE_TAINT_KEY);
      return { ...node, metadata: { ...node.metadata, annotations }, spec: { ...node.spec, unschedulable: false, taints } };
    });
  }

  /** Why the node is not initialized yet, or undefined when it is. */
  initializationBlocker(claim: StoredNodeClaim, node: NodeView): string | undefined {
    if (!node.ready) return 'node is not Ready';
    const startup = (claim.spec.startupTaints ?? []).filter((t) => node.taints.some((n) => sameTaint(n, t)));
    if (startup.length > 0) return `startup taints still present: ${startup.map((t) => `${t.key}:${t.effect}`).join(', ')}`;
    const ephemeral = node.taints.filter((t) => EPHEMERAL_TAINT_KEYS.includes(t.key));
    if (ephemeral.length > 0) return `ephemeral taints still present: ${ephemeral.map((t) => t.key).join(', ')}`;
    const requested = Object.keys(claim.spec.resources?.requests ?? {}).filter((r) => !STANDARD_RESOURCES.has(r));
    const missing = requested.filter((r) => !node.allocatable[r] || node.allocatable[r] === '0');
    if (missing.length > 0) return `requested extended resources not allocatable yet: ${missing.join(', ')}`;
    return undefined;
  }

  async label(name: string, labels: Record<string, string>): Promise<void> {
    await this.update(name, (node) => (Object.entries(labels).every(([k, v]) => node.metadata?.labels?.[k] === v) ? undefined : { ...node, metadata: { ...node.metadata, labels: { ...node.metadata?.labels, ...labels } } }));
  }

  async annotate(name: string, annotations: Record<string, string>): Promise<void> {
    await this.update(name, (node) => (Object.entries(annotations).every(([k, v]) => node.metadata?.annotations?.[k] === v) ? undefined : { ...node, metadata: { ...node.metadata, annotations: { ...node.metadata?.annotations, ...annotations } } }));
  }

  /**
   * Read, change, replace with the resourceVersion read; a conflict (the kubelet's status, the
   * node lifecycle controller's taints move the Node often while it comes up) is read again.
   * `change` returns undefined when there is nothing to write. Returns the Node as written
   * (or as read, when nothing was).
   */
  private async update(name: string, change: (node: V1Node) => V1Node | undefined): Promise<V1Node> {
    for (let attempt = 1; ; attempt++) {
      const node = await this.kube.core.readNode({ name });
      const updated = change(node);
      if (!updated) return node;
      try {
        return await this.kube.core.replaceNode({ name, body: updated });
      } catch (err) {
        if (!isConflict(err) || attempt >= SYNC_ATTEMPTS) throw err;
      }
    }
  }

  async ensureTaint(name: string, taint: V1Taint): Promise<void> {
    const node = await this.kube.core.readNode({ name });
    const taints = node.spec?.taints ?? [];
    if (taints.some((t) => sameTaint(t, taint))) return;
    await this.kube.core.replaceNode({ name, body: { ...node, spec: { ...node.spec, taints: [...taints, taint] } } });
  }

  /** Takes every taint with this key off the Node; a Node already gone, or without it, is success. */
  async removeTaint(name: string, key: string): Promise<void> {
    let node: V1Node;
    try {
      node = await this.kube.core.readNode({ name });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const taints = node.spec?.taints ?? [];
    if (!taints.some((t) => t.key === key)) return;
    await this.kube.core.replaceNode({ name, body: { ...node, spec: { ...node.spec, taints: taints.filter((t) => t.key !== key) } } });
  }

  /** Removes our finalizer and deletes the Node; a Node already gone is success. */
  async deleteNode(name: string): Promise<void> {
    try {
      const node = await this.kube.core.readNode({ name });
      const finalizers = node.metadata?.finalizers ?? [];
      if (finalizers.includes(TERMINATION_FINALIZER)) {
        await this.kube.core.replaceNode({ name, body: { ...node, metadata: { ...node.metadata, finalizers: finalizers.filter((f) => f !== TERMINATION_FINALIZER) } } });
      }
      await this.kube.core.deleteNode({ name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** The Node as registration writes it (NodeStore.syncRegistered says what changes). */
function registeredNode(node: V1Node, claim: StoredNodeClaim, options: { daemonSetGate?: string }): V1Node {
  const metadata = node.metadata ?? {};
  const firstSync = metadata.labels?.[REGISTERED_LABEL] !== 'true';
  let taints = (node.spec?.taints ?? []).filter((t) => t.key !== UNREGISTERED_TAINT_KEY);
  if (firstSync) {
    for (const t of [...(claim.spec.taints ?? []), ...(claim.spec.startupTaints ?? [])]) {
      if (!taints.some((existing) => sameTaint(existing, t))) taints = [...taints, { key: t.key, effect: t.effect, ...(t.value ? { value: t.value } : {}) }];
    }
  }
  const owner = { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: claim.metadata.name, uid: claim.metadata.uid, blockOwnerDeletion: true };
  const gate = firstSync && options.daemonSetGate !== undefined && node.spec?.unschedulable !== true;
  const updated: V1Node = {
    ...node,
    metadata: {
      ...metadata,
      ...(gate ? { annotations: { ...metadata.annotations, [DAEMONSET_GATE_ANNOTATION]: options.daemonSetGate ?? '' } } : {}),
      labels: { ...metadata.labels, ...(claim.metadata.labels ?? {}), [REGISTERED_LABEL]: 'true' },
      finalizers: [...new Set([...(metadata.finalizers ?? []), TERMINATION_FINALIZER])],
      ownerReferences: [...(metadata.ownerReferences ?? []).filter((o) => o.uid !== claim.metadata.uid), owner],
    },
    spec: { ...node.spec, taints, ...(gate ? { unschedulable: true } : {}) },
  };
  return updated;
}
