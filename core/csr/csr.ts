/**
 * Plain-data views of a kubelet CertificateSigningRequest and of the node autonode expects
 * it to be about. activities/kube/csr.ts builds a ParsedCsr from the API object (decoding
 * the PKCS#10 request); the policy in csr-policy.ts only ever sees these.
 */

export const Signers = {
  kubeletClient: 'kubernetes.io/kube-apiserver-client-kubelet',
  kubeletServing: 'kubernetes.io/kubelet-serving',
} as const;

export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';

/** The user a kubelet authenticates as once it holds its client certificate. */
export function nodeUsername(nodeName: string): string {
  return `${NODE_USER_PREFIX}${nodeName}`;
}

/** `system:node:<name>` → name; undefined for anything else (including an empty name). */
export function nodeNameFromUsername(username: string): string | undefined {
  if (!username.startsWith(NODE_USER_PREFIX)) return undefined;
  const name = username.slice(NODE_USER_PREFIX.length);
  return name.length > 0 ? name : undefined;
}

/**
 * Every CN of the subject. The decoder joins several with ',' (they match no node name);
 * split here so a request naming one of our nodes among others is found and denied rather
 * than left pending. A single CN containing ',' splits too: it is denied either way.
 */
export function commonNamesOf(csr: Pick<ParsedCsr, 'subject'>): string[] {
  const cn = csr.subject.commonName;
  return cn === undefined ? [] : cn.split(',');
}

/** The node names a CSR is about: every node its CN names, and its requester if a node. */
export function nodesNamedBy(csr: Pick<ParsedCsr, 'subject' | 'username'>): string[] {
  const names = [...commonNamesOf(csr), csr.username].flatMap((user) => nodeNameFromUsername(user) ?? []);
  return [...new Set(names)].sort();
}

export interface ParsedCsr {
  name: string;
  signerName: string;
  /** who created the CSR, as the API server authenticated them (spec.username) */
  username: string;
  groups: string[];
  /** spec.usages: what the signer will put in the certificate, whatever the request says */
  usages: string[];
  subject: { commonName: string | undefined; organizations: string[] };
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
  /**
   * SANs of any other kind (directory names, GUIDs, UPNs, registered IDs), or a marker when
   * the extension could not be decoded at all. None is legitimate in a kubelet certificate.
   */
  otherNames: string[];
  /** metadata.creationTimestamp, epoch milliseconds */
  createdAt: number;
}

/** The node a CSR claims to be, as autonode knows it from its own instance. */
export interface ExpectedNode {
  /** = the instance's private DNS name: the kubelet registers under it */
  nodeName: string;
  instanceId: string;
  /** for messages: whose node this is */
  nodeClaimName?: string;
  /** names the serving certificate may carry (the private DNS name, maybe others) */
  dnsNames: string[];
  ipAddresses: string[];
  /** the instance's launch time, epoch milliseconds */
  launchedAt: number;
  /** a Node object for this instance exists already */
  registered: boolean;
}

export interface CsrPolicy {
  /** users allowed to request a first client certificate (the node bootstrapper) */
  bootstrapperUsernames: string[];
  /** groups whose members may do the same, e.g. `system:bootstrappers` for bootstrap tokens */
  bootstrapperGroups: string[];
  /**
   * How much earlier than the instance's launch time a client CSR may appear to have been
   * created: both stamps are whole seconds from different clocks (EC2's and the API
   * server's). Anything older than launch minus this was not made by this instance.
   */
  clockSkewToleranceMs: number;
}

/** HyperShift's bootstrapper (reference/karpenter.md §3.5); no group by default. */
export const defaultCsrPolicy: CsrPolicy = {
  bootstrapperUsernames: ['system:serviceaccount:openshift-machine-config-operator:node-bootstrapper'],
  bootstrapperGroups: [],
  clockSkewToleranceMs: 5_000,
};
