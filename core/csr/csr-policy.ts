/**
 * Which kubelet certificate requests autonode approves (issue 6 item 3). HyperShift's
 * approver checks only the node name (reference/karpenter.md §3.5); this one also checks
 * who asked, the exact subject, every SAN against the instance's own names and addresses,
 * the usages, and timing against the instance's launch and the node's registration.
 *
 * Pure: the caller reads the CSR and the instance and decides which node the CSR is about
 * (by CN `system:node:<name>`, or for a serving CSR by its requester); the evaluation is
 * a function of the three values.
 */
import { assertNever } from '../assert';
import {
  NODES_GROUP,
  Signers,
  commonNamesOf,
  nodeUsername,
  type CsrPolicy,
  type ExpectedNode,
  type ParsedCsr,
} from './csr';

export * from './csr';

/** Every check that can deny a CSR; a denial names exactly one. */
export type CsrCheck =
  /** the PKCS#10 request itself could not be decoded */
  | 'request'
  | 'signer'
  | 'requester'
  | 'commonName'
  | 'organization'
  | 'subjectAltNames'
  | 'usages'
  | 'createdAfterLaunch'
  | 'notYetRegistered'
  /** the instance already got its one client certificate (issue 10 item 3) */
  | 'oneClientCertificate'
  /** several client requests before registration: which one the instance made is unknowable */
  | 'ambiguousClientRequest'
  | 'registeredForRenewal'
  | 'servingSanPresent'
  | 'dnsSan'
  | 'ipSan';

export type ApprovalReason = 'kubelet-client' | 'kubelet-client-renewal' | 'kubelet-serving';

export type CsrDecision =
  | { kind: 'approve'; reason: ApprovalReason; message: string }
  | { kind: 'deny'; check: CsrCheck; message: string }
  /** not about this node, or not a kind of request autonode answers: leave it alone */
  | { kind: 'ignore'; why: string };

type Failure = { check: CsrCheck; message: string };

const usageRules = {
  client: { required: ['digital signature', 'client auth'], optional: ['key encipherment'] },
  serving: { required: ['digital signature', 'server auth'], optional: ['key encipherment'] },
} as const;

export function evaluateCsr(csr: ParsedCsr, node: ExpectedNode, policy: CsrPolicy): CsrDecision {
  const nodeUser = nodeUsername(node.nodeName);
  const cnNamesNode = commonNamesOf(csr).includes(nodeUser);
  const requestedByNode = csr.username === nodeUser;
  const kind = kubeletCsrKind(csr.signerName);

  if (kind === undefined) {
    // Only the two kubelet signers are autonode's to rule on (its RBAC allows approving and
    // denying nothing else). Another signer's request naming this node is that signer's
    // approver's business: left alone, and never retried against a 403.
    return { kind: 'ignore', why: `signer ${csr.signerName} is not a kubelet signer; autonode rules only on ${Signers.kubeletClient} and ${Signers.kubeletServing}` };
  }
  if (!cnNamesNode && !requestedByNode) {
    return { kind: 'ignore', why: `neither the CN (${csr.subject.commonName ?? 'none'}) nor the requester (${csr.username}) is ${nodeUser}` };
  }

  const failure = kind === 'client' ? clientFailure(csr, node, policy) : servingFailure(csr, node);
  if (failure) return { kind: 'deny', ...failure };
  return approval(kind, csr, node);
}

/** One CSR naming the node, with what has become of it so far. */
export interface NodeCsr {
  csr: ParsedCsr;
  /** `approvedByAutonode`: autonode approved it earlier; `decided`: anything else final */
  state: 'pending' | 'approvedByAutonode' | 'decided';
}

/**
 * Decides every pending CSR naming one node, together: each is judged on its own by
 * evaluateCsr, then the rule that spans requests applies — an instance gets at most one
 * client certificate from the bootstrapper per launch. A shared bootstrap credential cannot
 * say which request the instance itself made, so autonode approves only a request that is
 * the sole candidate: once one is approved, any later one before registration is denied;
 * when several are pending at once, all are denied (a real kubelet whose request is denied
 * exits and asks again, so the cost of a race is a retry, never a second identity).
 * Returns decisions for the pending CSRs only, in the order given.
 */
export function decideNodeCsrs(csrs: readonly NodeCsr[], node: ExpectedNode, policy: CsrPolicy): Array<{ csr: ParsedCsr; decision: CsrDecision }> {
  const decided = csrs.filter((c) => c.state === 'pending').map(({ csr }) => ({ csr, decision: evaluateCsr(csr, node, policy) }));
  const firstClient = (d: CsrDecision) => d.kind === 'approve' && d.reason === 'kubelet-client';
  const candidates = decided.filter((d) => firstClient(d.decision)).map((d) => d.csr.name);
  if (candidates.length === 0) return decided;
  const issued = csrs
    .filter((c) => c.state === 'approvedByAutonode' && isBootstrapClientRequest(c.csr, node) && c.csr.createdAt >= node.launchedAt - policy.clockSkewToleranceMs)
    .map((c) => c.csr.name);
  const nodeUser = nodeUsername(node.nodeName);
  return decided.map(({ csr, decision }) => {
    if (!firstClient(decision)) return { csr, decision };
    if (issued.length > 0) {
      return { csr, decision: deny('oneClientCertificate', `instance ${node.instanceId} already got its client certificate as ${nodeUser} (CSR ${issued.join(', ')}); a second request before node ${node.nodeName} registers was not made by the instance's kubelet`) };
    }
    if (candidates.length > 1) {
      return { csr, decision: deny('ambiguousClientRequest', `${candidates.length} client certificate requests for ${nodeUser} are pending at once (${candidates.join(', ')}); autonode cannot tell which one instance ${node.instanceId} made, so it approves none (a kubelet whose request is denied asks again)`) };
    }
    return { csr, decision };
  });
}

/** A first (bootstrap) client certificate request for this node, whoever made it. */
function isBootstrapClientRequest(csr: ParsedCsr, node: ExpectedNode): boolean {
  const nodeUser = nodeUsername(node.nodeName);
  return csr.signerName === Signers.kubeletClient && csr.username !== nodeUser && commonNamesOf(csr).includes(nodeUser);
}

type KubeletCsrKind = 'client' | 'serving';

function kubeletCsrKind(signerName: string): KubeletCsrKind | undefined {
  if (signerName === Signers.kubeletClient) return 'client';
  if (signerName === Signers.kubeletServing) return 'serving';
  return undefined;
}

function approval(kind: KubeletCsrKind, csr: ParsedCsr, node: ExpectedNode): CsrDecision {
  const whose = describeNode(node);
  switch (kind) {
    case 'client':
      return csr.username === nodeUsername(node.nodeName)
        ? { kind: 'approve', reason: 'kubelet-client-renewal', message: `kubelet client certificate renewal for ${whose}` }
        : { kind: 'approve', reason: 'kubelet-client', message: `kubelet client certificate for ${whose}, requested by ${csr.username}` };
    case 'serving':
      return { kind: 'approve', reason: 'kubelet-serving', message: `kubelet serving certificate for ${whose} (${[...csr.dnsNames, ...csr.ipAddresses].join(', ')})` };
    default:
      return assertNever(kind);
  }
}

function clientFailure(csr: ParsedCsr, node: ExpectedNode, policy: CsrPolicy): Failure | undefined {
  const nodeUser = nodeUsername(node.nodeName);
  const renewal = csr.username === nodeUser;
  if (renewal) {
    if (!csr.groups.includes(NODES_GROUP)) return { check: 'requester', message: `renewal requester ${csr.username} is not in group ${NODES_GROUP}` };
  } else if (!isBootstrapper(csr, policy)) {
    return { check: 'requester', message: `requester ${csr.username} (groups ${list(csr.groups)}) is neither the node bootstrapper (${list([...policy.bootstrapperUsernames, ...policy.bootstrapperGroups.map((g) => `group ${g}`)])}) nor ${nodeUser}` };
  }
  const subject = subjectFailure(csr, nodeUser);
  if (subject) return subject;
  const sans = [...csr.dnsNames.map((n) => `DNS ${n}`), ...csr.ipAddresses.map((a) => `IP ${a}`), ...csr.emailAddresses.map((e) => `email ${e}`), ...csr.uris.map((u) => `URI ${u}`), ...csr.otherNames];
  if (sans.length > 0) return { check: 'subjectAltNames', message: `a kubelet client certificate carries no SANs, but this request has ${sans.join(', ')}` };
  const usages = usageFailure(csr.usages, 'client');
  if (usages) return usages;
  if (renewal) {
    if (!node.registered) return { check: 'registeredForRenewal', message: `${nodeUser} asked to renew its client certificate but node ${node.nodeName} is not registered` };
    return undefined;
  }
  if (csr.createdAt < node.launchedAt - policy.clockSkewToleranceMs) {
    return { check: 'createdAfterLaunch', message: `CSR created at ${iso(csr.createdAt)}, before instance ${node.instanceId} launched at ${iso(node.launchedAt)}` };
  }
  if (node.registered) {
    return { check: 'notYetRegistered', message: `node ${node.nodeName} is already registered: a new client certificate for it can only be a renewal requested by ${nodeUser}, not by ${csr.username}` };
  }
  return undefined;
}

function servingFailure(csr: ParsedCsr, node: ExpectedNode): Failure | undefined {
  const nodeUser = nodeUsername(node.nodeName);
  if (csr.username !== nodeUser || !csr.groups.includes(NODES_GROUP)) {
    return { check: 'requester', message: `a serving certificate for ${node.nodeName} must be requested by ${nodeUser} in group ${NODES_GROUP}, not by ${csr.username} (groups ${list(csr.groups)})` };
  }
  const subject = subjectFailure(csr, nodeUser);
  if (subject) return subject;
  const foreignKinds = [...csr.emailAddresses.map((e) => `email ${e}`), ...csr.uris.map((u) => `URI ${u}`), ...csr.otherNames];
  if (foreignKinds.length > 0) return { check: 'subjectAltNames', message: `a kubelet serving certificate carries only DNS and IP SANs, but this request has ${foreignKinds.join(', ')}` };
  if (csr.dnsNames.length === 0 && csr.ipAddresses.length === 0) return { check: 'servingSanPresent', message: 'a kubelet serving certificate needs at least one DNS or IP SAN' };
  const knownNames = new Set(node.dnsNames.map((n) => n.toLowerCase()));
  const foreignName = csr.dnsNames.find((n) => !knownNames.has(n.toLowerCase()));
  if (foreignName !== undefined) return { check: 'dnsSan', message: `DNS SAN ${foreignName} is not a name of instance ${node.instanceId} (${list(node.dnsNames)})` };
  const knownAddresses = new Set(node.ipAddresses.map(canonicalIp));
  const foreignIp = csr.ipAddresses.find((a) => !knownAddresses.has(canonicalIp(a)));
  if (foreignIp !== undefined) return { check: 'ipSan', message: `IP SAN ${foreignIp} is not an address of instance ${node.instanceId} (${list(node.ipAddresses)})` };
  return usageFailure(csr.usages, 'serving');
}

function subjectFailure(csr: ParsedCsr, nodeUser: string): Failure | undefined {
  const commonNames = commonNamesOf(csr);
  if (commonNames.length > 1) return { check: 'commonName', message: `subject has ${commonNames.length} CNs (${commonNames.join(', ')}); a kubelet certificate names exactly one, ${nodeUser}` };
  if (csr.subject.commonName !== nodeUser) return { check: 'commonName', message: `subject CN ${csr.subject.commonName ?? '(none)'} is not ${nodeUser}` };
  const orgs = csr.subject.organizations;
  if (orgs.length !== 1 || orgs[0] !== NODES_GROUP) return { check: 'organization', message: `subject O must be exactly [${NODES_GROUP}], not [${orgs.join(', ')}]` };
  return undefined;
}

function usageFailure(usages: readonly string[], kind: KubeletCsrKind): Failure | undefined {
  const rule = usageRules[kind];
  const allowed = new Set<string>([...rule.required, ...rule.optional]);
  const missing = rule.required.filter((u) => !usages.includes(u));
  const extra = usages.filter((u) => !allowed.has(u));
  if (missing.length === 0 && extra.length === 0) return undefined;
  const problems = [
    ...(missing.length > 0 ? [`missing ${missing.join(', ')}`] : []),
    ...(extra.length > 0 ? [`not allowed ${extra.join(', ')}`] : []),
  ];
  return { check: 'usages', message: `kubelet ${kind} certificate usages are ${rule.required.join(' + ')} (+ optional ${rule.optional.join(', ')}); this request has ${problems.join('; ')}` };
}

function isBootstrapper(csr: ParsedCsr, policy: CsrPolicy): boolean {
  return policy.bootstrapperUsernames.includes(csr.username) || csr.groups.some((g) => policy.bootstrapperGroups.includes(g));
}

/**
 * IPv6 has many spellings of one address ("::", case, leading zeros); EC2 and the x509
 * decoder need not agree on one. IPv4-embedded forms are left as they are: they compare
 * unequal, which denies rather than approves.
 */
function canonicalIp(address: string): string {
  if (!address.includes(':')) return address;
  const [head = '', tail, ...rest] = address.toLowerCase().split('::');
  if (rest.length > 0) return address;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const zeros = tail === undefined ? [] : Array<string>(Math.max(8 - left.length - right.length, 0)).fill('0');
  return [...left, ...zeros, ...right].map((g) => g.replace(/^0+(?=.)/, '')).join(':');
}

function describeNode(node: ExpectedNode): string {
  const claim = node.nodeClaimName ? `NodeClaim ${node.nodeClaimName}, ` : '';
  return `node ${node.nodeName} (${claim}instance ${node.instanceId})`;
}

function deny(check: CsrCheck, message: string): CsrDecision {
  return { kind: 'deny', check, message };
}

function list(values: readonly string[]): string {
  return values.length > 0 ? values.join(', ') : 'none';
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
