import { defaultCsrPolicy, Signers, type CsrPolicy, type ExpectedNode, type ParsedCsr } from '../../../core/csr/csr-policy';

export const nodeName = 'ip-10-0-1-5.ec2.internal';
export const launchedAt = Date.parse('2026-05-01T10:00:00Z');
export const bootstrapper = 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';

export function anExpectedNode(overrides: Partial<ExpectedNode> = {}): ExpectedNode {
  return {
    nodeName,
    instanceId: 'i-0123456789abcdef0',
    nodeClaimName: 'default-abc12',
    dnsNames: [nodeName],
    ipAddresses: ['10.0.1.5'],
    launchedAt,
    registered: false,
    ...overrides,
  };
}

/** The first client CSR a kubelet submits as the bootstrapper, a minute after launch. */
export function aClientCsr(overrides: Partial<ParsedCsr> = {}): ParsedCsr {
  return {
    name: 'csr-client',
    signerName: Signers.kubeletClient,
    username: bootstrapper,
    groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator', 'system:authenticated'],
    usages: ['digital signature', 'client auth'],
    subject: { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'] },
    dnsNames: [],
    ipAddresses: [],
    emailAddresses: [],
    uris: [],
    otherNames: [],
    createdAt: launchedAt + 60_000,
    ...overrides,
  };
}

/** The serving CSR a registered kubelet submits as itself. */
export function aServingCsr(overrides: Partial<ParsedCsr> = {}): ParsedCsr {
  return aClientCsr({
    name: 'csr-serving',
    signerName: Signers.kubeletServing,
    username: `system:node:${nodeName}`,
    groups: ['system:nodes', 'system:authenticated'],
    usages: ['digital signature', 'server auth'],
    dnsNames: [nodeName],
    ipAddresses: ['10.0.1.5'],
    ...overrides,
  });
}

export function aPolicy(overrides: Partial<CsrPolicy> = {}): CsrPolicy {
  return { ...defaultCsrPolicy, ...overrides };
}
