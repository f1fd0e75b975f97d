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
import { assertNever } from '../api/assert';
import {
  NODES_GROUP,
  Signers,
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
  const cnNamesNode = csr.subject.commonName === nodeUser;
  const requestedByNode = csr.username === nodeUser;
  const kind = kubeletCsrKind(csr.signerName);

  if (kind === undefined) {
    // Any signer the API server trusts could make a certificate that logs in as this node,
    // so a request naming it from another signer is refused rather than left to chance.
    if (!cnNamesNode) return { kind: 'ignore', why: `signer ${csr.signerName} is not a kubelet signer and the CN does not name ${node.nodeName}` };
    return deny('signer', `signer ${csr.signerName} may not issue a certificate for node ${node.nodeName}; only ${Signers.kubeletClient} and ${Signers.kubeletServing} are approved`);
  }
  if (!cnNamesNode && !requestedByNode) {
    return { kind: 'ignore', why: `neither the CN (${csr.subject.commonName ?? 'none'}) nor the requester (${csr.username}) is ${nodeUser}` };
  }

  const failure = kind === 'client' ? clientFailure(csr, node, policy) : servingFailure(csr, node);
  if (failure) return { kind: 'deny', ...failure };
  return approval(kind, csr, node);
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
