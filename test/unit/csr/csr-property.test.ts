/**
 * Property: every CSR autonode approves is one the signer turns into exactly a kubelet
 * certificate for the right node. The real pipeline (parseCsr + evaluateCsr) runs over
 * generated CSR objects — requester × signer × usages × subject × SANs × key type ×
 * registration, plus PEM/DER mutations from the differential corpus — and each approval
 * is checked against what GO reads from the request (test/go/csrparse), not against
 * autonode's own parse: a rule that holds only in autonode's reading proves nothing.
 */
import { mulberry32 } from '../../support/random';
import { InvalidCsrError, parseCsr } from '../../../activities/kube/csr-parse';
import { Signers, evaluateCsr, type CsrDecision, type ExpectedNode } from '../../../core/csr/csr-policy';
import { aPolicy, anExpectedNode, bootstrapper, nodeName } from './builders';
import { GeneralNames as GN, Strings, cn, name, org, pem, signedRequest } from './csr-builder';
import {
  apiServerSans,
  buildCorpus,
  csrObject,
  generateCorpusKeys,
  keyKinds,
  kubeletSubject,
  nodeSans,
  nodeUser,
  otherNodeName,
  withSans,
} from './csr-corpus';
import { goRead, goSigns, type GoVerdict } from './go-csrparse';

const SEED = 7;
const COMBINATIONS_PER_REQUEST = 8;

const requesters = {
  bootstrapper: { username: bootstrapper, groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator', 'system:authenticated'] },
  theNode: { username: nodeUser(nodeName), groups: ['system:nodes', 'system:authenticated'] },
  theNodeWithoutGroup: { username: nodeUser(nodeName), groups: ['system:authenticated'] },
  anotherNode: { username: nodeUser(otherNodeName), groups: ['system:nodes', 'system:authenticated'] },
  aUser: { username: 'alice', groups: ['developers', 'system:authenticated'] },
} as const;

const signers = [Signers.kubeletClient, Signers.kubeletServing, 'kubernetes.io/kube-apiserver-client', 'example.com/custom-signer'] as const;

const usageSets = [
  ['digital signature', 'client auth'],
  ['digital signature', 'key encipherment', 'client auth'],
  ['digital signature', 'server auth'],
  ['key encipherment', 'digital signature', 'server auth'],
  ['digital signature', 'client auth', 'server auth'],
  ['client auth'],
  ['digital signature', 'cert sign', 'client auth'],
  [],
] as const;

const subjects: Record<string, () => Uint8Array> = {
  right: () => kubeletSubject(nodeName),
  otherNodesCn: () => kubeletSubject(otherNodeName),
  twoCnsOursFirst: () => name([cn(nodeUser(nodeName))], [cn(nodeUser(otherNodeName))], [org('system:nodes')]),
  twoCnsOursLast: () => name([cn(nodeUser(otherNodeName))], [cn(nodeUser(nodeName))], [org('system:nodes')]),
  extraO: () => kubeletSubject(nodeName, [org('system:masters')]),
  noO: () => name([cn(nodeUser(nodeName))]),
  utf8Strings: () => name([org('system:nodes', Strings.utf8)], [cn(nodeUser(nodeName), Strings.utf8)]),
};

const sanSets: Record<string, () => Uint8Array[]> = {
  none: () => [],
  nodes: nodeSans,
  nodeDnsOnly: () => [GN.dns(nodeName)],
  nodeDnsUpperCase: () => [GN.dns(nodeName.toUpperCase())],
  apiServerName: apiServerSans,
  foreignIp: () => [GN.dns(nodeName), GN.ip('10.0.1.6')],
  email: () => [...nodeSans(), GN.email('node@example.com')],
  uri: () => [...nodeSans(), GN.uri('spiffe://cluster/ns/kube-system')],
};

interface Case {
  id: string;
  request: Uint8Array;
}

const clientUsages = new Set(['digital signature', 'key encipherment', 'client auth']);
const servingUsages = new Set(['digital signature', 'key encipherment', 'server auth']);

/** What must hold, in Go's reading, for an approved CSR; [] when it all does. */
function violations(approved: { signerName: string; username: string; groups: string[]; usages: string[] }, go: GoVerdict, node: ExpectedNode): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, problem: string) => (ok ? undefined : problems.push(problem));
  check(goSigns(go), `the signer would not sign it (${go.error ?? go.signatureError})`);
  check(approved.signerName === Signers.kubeletClient || approved.signerName === Signers.kubeletServing, `signer ${approved.signerName} is not a kubelet signer`);
  check(go.commonName === nodeUser(node.nodeName) && go.commonNames.length === 1, `Go's CN is ${go.commonName} (all: ${go.commonNames.join(', ')})`);
  check(JSON.stringify(go.organizations) === JSON.stringify(['system:nodes']), `Go's O is [${go.organizations.join(', ')}]`);
  const has = (usages: string[], required: string[], allowed: Set<string>) => required.every((u) => usages.includes(u)) && usages.every((u) => allowed.has(u));
  if (approved.signerName === Signers.kubeletClient) {
    check([...go.dnsNames, ...go.ipAddresses, ...go.emailAddresses, ...go.uris].length === 0, `a client certificate with SANs ${[...go.dnsNames, ...go.ipAddresses, ...go.emailAddresses, ...go.uris].join(', ')}`);
    const byBootstrapper = approved.username === bootstrapper && !node.registered;
    const renewal = approved.username === nodeUser(node.nodeName) && approved.groups.includes('system:nodes') && node.registered;
    check(byBootstrapper || renewal, `client certificate requested by ${approved.username} (registered: ${node.registered})`);
    check(has(approved.usages, ['digital signature', 'client auth'], clientUsages), `client usages ${approved.usages.join(', ')}`);
  }
  if (approved.signerName === Signers.kubeletServing) {
    check(approved.username === nodeUser(node.nodeName) && approved.groups.includes('system:nodes'), `serving certificate requested by ${approved.username}`);
    check(go.emailAddresses.length === 0 && go.uris.length === 0, `serving certificate with email/URI SANs ${[...go.emailAddresses, ...go.uris].join(', ')}`);
    const names = new Set(node.dnsNames.map((n) => n.toLowerCase()));
    check(go.dnsNames.every((n) => names.has(n.toLowerCase())), `DNS SANs ${go.dnsNames.join(', ')} not all the node's (${node.dnsNames.join(', ')})`);
    check(go.ipAddresses.every((a) => node.ipAddresses.includes(a)), `IP SANs ${go.ipAddresses.join(', ')} not all the node's (${node.ipAddresses.join(', ')})`);
    check(has(approved.usages, ['digital signature', 'server auth'], servingUsages), `serving usages ${approved.usages.join(', ')}`);
  }
  return problems;
}

describe('CSR approval, checked against Go’s reading of the request', () => {
  let cases: Case[];
  let verdicts: Map<string, GoVerdict>;

  beforeAll(async () => {
    const keys = await generateCorpusKeys();
    const generated: Case[] = [];
    for (const kind of keyKinds) {
      for (const [subject, buildSubject] of Object.entries(subjects)) {
        for (const [sans, buildSans] of Object.entries(sanSets)) {
          const names = buildSans();
          const request = await signedRequest(keys[kind], { subject: buildSubject(), attributes: names.length > 0 ? withSans(...names) : undefined });
          generated.push({ id: `${kind}/${subject}/${sans}`, request: Buffer.from(pem(request), 'latin1') });
        }
      }
    }
    // A sample of the differential corpus: named attacks and seeded PEM/DER mutations.
    const mutated = (await buildCorpus({ keys, seed: SEED, mutationsPerBase: 6 })).map(({ id, request }) => ({ id: `corpus/${id}`, request }));
    cases = [...generated, ...mutated];
    verdicts = goRead(cases);
  }, 300_000);

  it('approves only what the signer certifies as a kubelet certificate for that node, in every combination', () => {
    const random = mulberry32(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const decisions: Array<{ id: string; reason: string }> = [];
    const problems: string[] = [];
    for (const { id, request } of cases) {
      const go = verdicts.get(id)!;
      // The combinations that can succeed, then a seeded sample of all the others.
      const combinations = [
        { requester: requesters.bootstrapper, signerName: Signers.kubeletClient, usages: usageSets[0], registered: false },
        { requester: requesters.theNode, signerName: Signers.kubeletClient, usages: usageSets[1], registered: true },
        { requester: requesters.theNode, signerName: Signers.kubeletServing, usages: usageSets[3], registered: true },
        ...Array.from({ length: COMBINATIONS_PER_REQUEST }, () => ({ requester: pick(Object.values(requesters)), signerName: pick(signers), usages: pick(usageSets), registered: random() < 0.5 })),
      ];
      for (const { requester, signerName, usages, registered } of combinations) {
        const node = anExpectedNode({ registered });
        const spec = { signerName, username: requester.username, groups: [...requester.groups], usages: [...usages] };
        let decision: CsrDecision;
        try {
          decision = evaluateCsr(parseCsr(csrObject(request, spec)), node, aPolicy());
        } catch (err) {
          if (err instanceof InvalidCsrError) continue; // never approved
          throw err;
        }
        if (decision.kind !== 'approve') continue;
        decisions.push({ id, reason: decision.reason });
        for (const problem of violations(spec, go, node)) problems.push(`${id} as ${requester.username} to ${signerName} (${usages.join(', ')}; registered ${registered}): ${problem}`);
      }
    }
    expect(problems).toEqual([]);
    // It must be able to fail: approvals of every kind, for every key type.
    const reasons = new Set(decisions.map((d) => d.reason));
    expect([...reasons].sort()).toEqual(['kubelet-client', 'kubelet-client-renewal', 'kubelet-serving']);
    for (const kind of keyKinds) expect(decisions.some((d) => d.id.startsWith(`${kind}/`))).toBe(true);
    expect(decisions.length).toBeGreaterThan(100);
  });
});
