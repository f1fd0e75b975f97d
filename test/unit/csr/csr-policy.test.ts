import { decideNodeCsrs, evaluateCsr, type CsrCheck, type NodeCsr, type CsrDecision, type ExpectedNode, type ParsedCsr } from '../../../core/csr/csr-policy';
import { aClientCsr, aPolicy, aServingCsr, anExpectedNode, launchedAt, nodeName } from './builders';

const registered = anExpectedNode({ registered: true });
const self = `system:node:${nodeName}`;
const nodeGroups = ['system:nodes', 'system:authenticated'];

function expectDenied(decision: CsrDecision, check: CsrCheck, message: string | RegExp): void {
  expect(decision).toEqual({ kind: 'deny', check, message: typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message) });
}

describe('kubelet CSR policy: approvals', () => {
  it.each<[string, ParsedCsr, ExpectedNode, string]>([
    ['first client certificate from the bootstrapper', aClientCsr(), anExpectedNode(), 'kubelet-client'],
    ['client certificate with key encipherment', aClientCsr({ usages: ['digital signature', 'key encipherment', 'client auth'] }), anExpectedNode(), 'kubelet-client'],
    ['client certificate created in the same second as the launch, clocks a little apart', aClientCsr({ createdAt: launchedAt - 1_000 }), anExpectedNode(), 'kubelet-client'],
    ['client renewal by the registered node itself', aClientCsr({ username: self, groups: nodeGroups }), registered, 'kubelet-client-renewal'],
    ['serving certificate with DNS and IP SANs of the instance', aServingCsr(), registered, 'kubelet-serving'],
    ['serving certificate with only the IP SAN', aServingCsr({ dnsNames: [] }), registered, 'kubelet-serving'],
    ['serving certificate, DNS SAN in other case', aServingCsr({ dnsNames: [nodeName.toUpperCase()] }), registered, 'kubelet-serving'],
    ['serving certificate, IPv6 spelt differently', aServingCsr({ ipAddresses: ['2600:1f18:0:0:0:0:0:0a'] }), anExpectedNode({ registered: true, ipAddresses: ['2600:1f18::a'] }), 'kubelet-serving'],
  ])('approves %s', (_name, csr, node, reason) => {
    expect(evaluateCsr(csr, node, aPolicy())).toEqual({ kind: 'approve', reason, message: expect.stringContaining('instance i-0123456789abcdef0') });
  });

  it('accepts a configured bootstrapper group, e.g. bootstrap tokens', () => {
    const csr = aClientCsr({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] });
    expect(evaluateCsr(csr, anExpectedNode(), aPolicy()).kind).toBe('deny');
    expect(evaluateCsr(csr, anExpectedNode(), aPolicy({ bootstrapperGroups: ['system:bootstrappers'] })).kind).toBe('approve');
  });

  it('names the NodeClaim and instance when approving', () => {
    expect(evaluateCsr(aClientCsr(), anExpectedNode(), aPolicy())).toEqual({
      kind: 'approve',
      reason: 'kubelet-client',
      message: `kubelet client certificate for node ${nodeName} (NodeClaim default-abc12, instance i-0123456789abcdef0), requested by system:serviceaccount:openshift-machine-config-operator:node-bootstrapper`,
    });
  });
});

// One row per check: each CSR differs from an approvable one in exactly one respect, so
// removing that check from the policy turns the row into an approval.
describe('kubelet CSR policy: each check denies on its own', () => {
  it.each<[string, ParsedCsr, ExpectedNode, CsrCheck, string | RegExp]>([
    // client certificate
    ['client CSR from an unrelated ServiceAccount', aClientCsr({ username: 'system:serviceaccount:default:builder', groups: ['system:serviceaccounts'] }), anExpectedNode(), 'requester', 'requester system:serviceaccount:default:builder'],
    ['client CSR by another node naming this one', aClientCsr({ username: 'system:node:ip-10-0-9-9.ec2.internal', groups: nodeGroups }), anExpectedNode(), 'requester', 'requester system:node:ip-10-0-9-9.ec2.internal'],
    ['client renewal by a requester outside system:nodes', aClientCsr({ username: self, groups: ['system:authenticated'] }), registered, 'requester', 'not in group system:nodes'],
    ['client CSR whose CN names another node, requested by this one', aClientCsr({ username: self, groups: nodeGroups, subject: { commonName: 'system:node:ip-10-0-9-9.ec2.internal', organizations: ['system:nodes'] } }), registered, 'commonName', 'subject CN system:node:ip-10-0-9-9.ec2.internal is not'],
    ['client CSR naming this node among two CNs', aClientCsr({ subject: { commonName: `${self},system:node:ip-10-0-9-9.ec2.internal`, organizations: ['system:nodes'] } }), anExpectedNode(), 'commonName', 'subject has 2 CNs'],
    ['client CSR with O system:masters added', aClientCsr({ subject: { commonName: self, organizations: ['system:nodes', 'system:masters'] } }), anExpectedNode(), 'organization', 'not [system:nodes, system:masters]'],
    ['client CSR without an O', aClientCsr({ subject: { commonName: self, organizations: [] } }), anExpectedNode(), 'organization', 'exactly [system:nodes]'],
    ['client CSR with a DNS SAN', aClientCsr({ dnsNames: [nodeName] }), anExpectedNode(), 'subjectAltNames', `DNS ${nodeName}`],
    ['client CSR with an IP SAN', aClientCsr({ ipAddresses: ['10.0.1.5'] }), anExpectedNode(), 'subjectAltNames', 'IP 10.0.1.5'],
    ['client CSR with an email SAN', aClientCsr({ emailAddresses: ['root@example.com'] }), anExpectedNode(), 'subjectAltNames', 'email root@example.com'],
    ['client CSR with a URI SAN', aClientCsr({ uris: ['spiffe://x/y'] }), anExpectedNode(), 'subjectAltNames', 'URI spiffe://x/y'],
    ['client CSR with an undecodable SAN', aClientCsr({ otherNames: ['undecodable subjectAltName extension'] }), anExpectedNode(), 'subjectAltNames', 'undecodable'],
    ['client CSR asking for server auth too', aClientCsr({ usages: ['digital signature', 'client auth', 'server auth'] }), anExpectedNode(), 'usages', 'not allowed server auth'],
    ['client CSR without client auth', aClientCsr({ usages: ['digital signature'] }), anExpectedNode(), 'usages', 'missing client auth'],
    ['client CSR without digital signature', aClientCsr({ usages: ['key encipherment', 'client auth'] }), anExpectedNode(), 'usages', 'missing digital signature'],
    ['client CSR created before the instance launched', aClientCsr({ createdAt: launchedAt - 60_000 }), anExpectedNode(), 'createdAfterLaunch', 'before instance i-0123456789abcdef0 launched at 2026-05-01T10:00:00.000Z'],
    ['a second client CSR from the bootstrapper after registration', aClientCsr(), registered, 'notYetRegistered', `node ${nodeName} is already registered`],
    ['client renewal for a node not registered', aClientCsr({ username: self, groups: nodeGroups }), anExpectedNode(), 'registeredForRenewal', 'is not registered'],
    // serving certificate
    ['serving CSR from the bootstrapper', aServingCsr({ username: 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper', groups: ['system:serviceaccounts'] }), registered, 'requester', 'not by system:serviceaccount:openshift-machine-config-operator:node-bootstrapper'],
    ['serving CSR by the node outside system:nodes', aServingCsr({ groups: ['system:authenticated'] }), registered, 'requester', 'in group system:nodes'],
    ['serving CSR by another node naming this one', aServingCsr({ username: 'system:node:ip-10-0-9-9.ec2.internal' }), registered, 'requester', 'not by system:node:ip-10-0-9-9.ec2.internal'],
    ['serving CSR by this node naming another', aServingCsr({ subject: { commonName: 'system:node:ip-10-0-9-9.ec2.internal', organizations: ['system:nodes'] } }), registered, 'commonName', 'is not system:node:ip-10-0-1-5'],
    ['serving CSR with a second O', aServingCsr({ subject: { commonName: self, organizations: ['system:nodes', 'system:masters'] } }), registered, 'organization', 'exactly [system:nodes]'],
    ['serving CSR with an email SAN', aServingCsr({ emailAddresses: ['root@example.com'] }), registered, 'subjectAltNames', 'email root@example.com'],
    ['serving CSR with a URI SAN', aServingCsr({ uris: ['https://evil.example'] }), registered, 'subjectAltNames', 'URI https://evil.example'],
    ['serving CSR with a directory-name SAN', aServingCsr({ otherNames: ['dn CN=x'] }), registered, 'subjectAltNames', 'dn CN=x'],
    ['serving CSR with no SAN', aServingCsr({ dnsNames: [], ipAddresses: [] }), registered, 'servingSanPresent', 'at least one DNS or IP SAN'],
    ['serving CSR with a foreign DNS SAN', aServingCsr({ dnsNames: [nodeName, 'kubernetes.default.svc'] }), registered, 'dnsSan', `DNS SAN kubernetes.default.svc is not a name of instance i-0123456789abcdef0 (${nodeName})`],
    ['serving CSR with a foreign IP SAN', aServingCsr({ ipAddresses: ['10.0.1.5', '10.9.9.9'] }), registered, 'ipSan', 'IP SAN 10.9.9.9 is not an address of instance i-0123456789abcdef0 (10.0.1.5)'],
    ['serving CSR asking for client auth too', aServingCsr({ usages: ['digital signature', 'server auth', 'client auth'] }), registered, 'usages', 'not allowed client auth'],
    ['serving CSR without server auth', aServingCsr({ usages: ['digital signature', 'key encipherment'] }), registered, 'usages', 'missing server auth'],
  ])('denies %s', (_name, csr, node, check, message) => {
    expectDenied(evaluateCsr(csr, node, aPolicy()), check, message);
  });
});

describe('kubelet CSR policy: CSRs about other nodes are left alone', () => {
  it.each<[string, ParsedCsr]>([
    ['a client CSR for another node', aClientCsr({ subject: { commonName: 'system:node:ip-10-0-9-9.ec2.internal', organizations: ['system:nodes'] } })],
    ['a serving CSR by and for another node', aServingCsr({ username: 'system:node:other', subject: { commonName: 'system:node:other', organizations: ['system:nodes'] } })],
    ['a CSR of an unrelated signer and subject', aClientCsr({ signerName: 'example.com/webhook', subject: { commonName: 'webhook.default.svc', organizations: [] } })],
    ['a CSR without a CN from someone else', aClientCsr({ subject: { commonName: undefined, organizations: [] } })],
    // autonode's RBAC can rule on the two kubelet signers only: anything else is another approver's
    ['a client CSR from another signer naming the node', aClientCsr({ signerName: 'kubernetes.io/kube-apiserver-client' })],
    ['a serving CSR from a custom signer naming the node', aServingCsr({ signerName: 'example.com/serving' })],
    ['a CN that only starts with this node name', aClientCsr({ subject: { commonName: `${self}.evil`, organizations: ['system:nodes'] } })],
  ])('ignores %s', (_name, csr) => {
    expect(evaluateCsr(csr, anExpectedNode(), aPolicy())).toEqual({ kind: 'ignore', why: expect.any(String) });
  });
});

describe('kubelet CSR policy: one client certificate per launch', () => {
  const decide = (csrs: NodeCsr[], node = anExpectedNode()) =>
    decideNodeCsrs(csrs, node, aPolicy()).map(({ csr, decision }) => [csr.name, decision.kind, decision.kind === 'deny' ? decision.check : '']);

  it('approves the only pending client request', () => {
    expect(decide([{ csr: aClientCsr({ name: 'a' }), state: 'pending' }])).toEqual([['a', 'approve', '']]);
  });

  it('denies a second request once one was approved for this launch', () => {
    expect(decide([
      { csr: aClientCsr({ name: 'a' }), state: 'approvedByAutonode' },
      { csr: aClientCsr({ name: 'b', createdAt: launchedAt + 90_000 }), state: 'pending' },
    ])).toEqual([['b', 'deny', 'oneClientCertificate']]);
  });

  it('an approval from before this launch (an earlier instance with the same name) does not count', () => {
    expect(decide([
      { csr: aClientCsr({ name: 'old', createdAt: launchedAt - 3_600_000 }), state: 'approvedByAutonode' },
      { csr: aClientCsr({ name: 'b' }), state: 'pending' },
    ])).toEqual([['b', 'approve', '']]);
  });

  it('denies every candidate when several are pending at once: which one the instance made is unknowable', () => {
    expect(decide([
      { csr: aClientCsr({ name: 'a' }), state: 'pending' },
      { csr: aClientCsr({ name: 'b', createdAt: launchedAt + 61_000 }), state: 'pending' },
    ])).toEqual([['a', 'deny', 'ambiguousClientRequest'], ['b', 'deny', 'ambiguousClientRequest']]);
  });

  it('a request denied on its own merits does not make the honest one ambiguous', () => {
    expect(decide([
      { csr: aClientCsr({ name: 'a' }), state: 'pending' },
      { csr: aClientCsr({ name: 'bad', usages: ['digital signature', 'client auth', 'server auth'] }), state: 'pending' },
    ])).toEqual([['a', 'approve', ''], ['bad', 'deny', 'usages']]);
  });

  it('renewals and serving requests of the registered node are not limited by it', () => {
    const node = anExpectedNode({ registered: true });
    expect(decide([
      { csr: aClientCsr({ name: 'first' }), state: 'approvedByAutonode' },
      { csr: aClientCsr({ name: 'renew', username: self, groups: nodeGroups }), state: 'pending' },
      { csr: aServingCsr({ name: 'serve' }), state: 'pending' },
    ], node)).toEqual([['renew', 'approve', ''], ['serve', 'approve', '']]);
  });
});
