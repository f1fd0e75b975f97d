import { EXPECTED_NODE_NAME_ANNOTATION, signalNames } from '../../core/lifecycle';

/** What the watcher does in answer to a change in the guest cluster. */
export type WatchAction =
  | { kind: 'start'; nodeClaim: string; uid: string }
  | { kind: 'signal'; nodeClaim: string; signal: typeof signalNames.nodeClaimChanged | typeof signalNames.nodeChanged }
  | { kind: 'signal'; nodeClaim: string; signal: typeof signalNames.csrCreated; arg: string };

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface NodeClaimFacts {
  name: string;
  uid: string;
  deleting: boolean;
  providerID?: string;
  annotations?: Record<string, string>;
}

export interface NodeFacts {
  name: string;
  providerID?: string;
  deleting: boolean;
  ready: boolean;
  taints: string[];
}

interface ClaimEntry {
  uid: string;
  deleting: boolean;
  providerID?: string;
  expectedNodeName?: string;
}

const nodeSummary = (n: NodeFacts) => JSON.stringify([n.deleting, n.ready, [...n.taints].sort()]);

/**
 * Routes watch events to the nodeclaim workflows, by name only, and only on transitions
 * (ARCHITECTURE.md: signals carry ids, never objects). Keeps just enough state to know
 * which claim a Node or CSR belongs to: providerID and expected node name per claim.
 * Pure: the watcher activity feeds it events and carries out the actions.
 */
export class ClusterEventRouter {
  private readonly claims = new Map<string, ClaimEntry>();
  private readonly byProviderId = new Map<string, string>();
  private readonly byNodeName = new Map<string, string>();
  private readonly nodes = new Map<string, string>();
  /**
   * Pending CSRs by name, with the nodes each names: a kubelet may ask before its claim's
   * expected node name reaches this watcher (the launch writes it moments after EC2
   * answers), and the request is routed when the name arrives instead of waiting for the
   * workflow's resync. Forgotten when answered or deleted (and after a relist without it).
   */
  private readonly pendingCsrs = new Map<string, readonly string[]>();

  onNodeClaim(type: WatchEventType, claim: NodeClaimFacts): WatchAction[] {
    const previous = this.claims.get(claim.name);
    if (type === 'DELETED') {
      this.forget(claim.name);
      return previous ? [{ kind: 'signal', nodeClaim: claim.name, signal: signalNames.nodeClaimChanged }] : [];
    }
    const entry: ClaimEntry = { uid: claim.uid, deleting: claim.deleting };
    if (claim.providerID) entry.providerID = claim.providerID;
    const expected = claim.annotations?.[EXPECTED_NODE_NAME_ANNOTATION];
    if (expected) entry.expectedNodeName = expected;
    this.forget(claim.name);
    this.claims.set(claim.name, entry);
    if (entry.providerID) this.byProviderId.set(entry.providerID, claim.name);
    if (entry.expectedNodeName) this.byNodeName.set(entry.expectedNodeName, claim.name);
    // pending CSRs that named this node before the claim did: routed now, after any start
    const waiting: WatchAction[] =
      entry.expectedNodeName !== undefined && entry.expectedNodeName !== previous?.expectedNodeName ? this.csrsNaming(claim.name, entry.expectedNodeName) : [];

    // A claim first seen by this watcher (or recreated under the same name) gets its
    // workflow; starting is idempotent (USE_EXISTING), so a restarted watcher is harmless.
    // One first seen deleting was deleted while no watcher ran (a worker killed mid-command):
    // its running workflow missed that transition and would sleep to its steady resync (5 min).
    if (!previous || previous.uid !== claim.uid) {
      const start: WatchAction = { kind: 'start', nodeClaim: claim.name, uid: claim.uid };
      return claim.deleting ? [start, { kind: 'signal', nodeClaim: claim.name, signal: signalNames.nodeClaimChanged }, ...waiting] : [start, ...waiting];
    }
    if (!previous.deleting && claim.deleting) return [{ kind: 'signal', nodeClaim: claim.name, signal: signalNames.nodeClaimChanged }, ...waiting];
    return waiting;
  }

  onNode(type: WatchEventType, node: NodeFacts): WatchAction[] {
    const owner = (node.providerID ? this.byProviderId.get(node.providerID) : undefined) ?? this.byNodeName.get(node.name);
    const before = this.nodes.get(node.name);
    if (type === 'DELETED') this.nodes.delete(node.name);
    else this.nodes.set(node.name, nodeSummary(node));
    if (!owner) return [];
    const changed = type === 'DELETED' || before !== nodeSummary(node);
    return changed ? [{ kind: 'signal', nodeClaim: owner, signal: signalNames.nodeChanged }] : [];
  }

  /**
   * `nodeNames`: every node the CSR names, by any CN or by its requester (core/csr/csr.ts
   * nodesNamedBy), also for a request autonode cannot read: each owner reviews it, so
   * nothing naming one of our nodes sits Pending unanswered.
   */
  onCsr(type: WatchEventType, csr: { name: string; nodeNames: readonly string[]; pending: boolean }): WatchAction[] {
    if (type === 'DELETED' || !csr.pending) {
      this.pendingCsrs.delete(csr.name);
      return [];
    }
    this.pendingCsrs.set(csr.name, csr.nodeNames);
    const owners = [...new Set(csr.nodeNames.flatMap((n) => this.byNodeName.get(n) ?? []))].sort();
    return owners.map((owner) => ({ kind: 'signal', nodeClaim: owner, signal: signalNames.csrCreated, arg: csr.name }));
  }

  /** After a relist: claims absent from the fresh list were deleted while we were away. */
  reconcileClaims(present: ReadonlySet<string>): WatchAction[] {
    const gone = [...this.claims.keys()].filter((name) => !present.has(name)).sort();
    return gone.flatMap((name) => this.onNodeClaim('DELETED', { name, uid: '', deleting: true }));
  }

  /** After a relist: CSRs absent from the fresh list were answered or deleted while we were away. */
  reconcileCsrs(present: ReadonlySet<string>): void {
    for (const name of [...this.pendingCsrs.keys()]) if (!present.has(name)) this.pendingCsrs.delete(name);
  }

  private csrsNaming(owner: string, nodeName: string): WatchAction[] {
    return [...this.pendingCsrs]
      .filter(([, nodeNames]) => nodeNames.includes(nodeName))
      .map(([csr]) => csr)
      .sort()
      .map((csr): WatchAction => ({ kind: 'signal', nodeClaim: owner, signal: signalNames.csrCreated, arg: csr }));
  }

  private forget(name: string): void {
    const entry = this.claims.get(name);
    if (!entry) return;
    if (entry.providerID) this.byProviderId.delete(entry.providerID);
    if (entry.expectedNodeName) this.byNodeName.delete(entry.expectedNodeName);
    this.claims.delete(name);
  }
}
