// The reading of RBAC manifests and audit logs behind test/integration/worker-rbac.test.ts:
// a grant counts as used only by an allowed request of the same group, resource,
// subresource, verb and scope; denials and unused grants are found, not assumed away.
import { grantsFor, rbacUsage, requestsOf, usageTable, type AuditedRequest } from '../support/rbac-audit';

const sa = { namespace: 'autonode-system', name: 'autonode-worker' };
const subject = { kind: 'ServiceAccount', name: sa.name, namespace: sa.namespace };
const clusterRole = (name: string, rules: unknown[]) => ({ kind: 'ClusterRole', metadata: { name }, rules });
const clusterBinding = (role: string, subjects = [subject]) => ({ kind: 'ClusterRoleBinding', metadata: { name: role }, roleRef: { kind: 'ClusterRole', name: role }, subjects });
const roleBinding = (namespace: string, role: { kind: string; name: string }) => ({ kind: 'RoleBinding', metadata: { name: `${role.name}-binding`, namespace }, roleRef: role, subjects: [subject] });

const manifests = [
  clusterRole('hc', [
    { apiGroups: ['hypershift.openshift.io'], resources: ['hostedclusters'], verbs: ['get', 'watch'] },
    { apiGroups: ['hypershift.openshift.io'], resources: ['hostedclusters/status'], verbs: ['patch'] },
  ]),
  clusterBinding('hc'),
  clusterRole('secrets', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]),
  roleBinding('clusters', { kind: 'ClusterRole', name: 'secrets' }),
  { kind: 'Role', metadata: { name: 'own', namespace: 'autonode-system' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] },
  roleBinding('autonode-system', { kind: 'Role', name: 'own' }),
  // someone else's
  clusterRole('other', [{ apiGroups: [''], resources: ['pods'], verbs: ['delete'] }]),
  clusterBinding('other', [{ kind: 'ServiceAccount', name: 'else', namespace: 'x' }]),
];

const user = `system:serviceaccount:${sa.namespace}:${sa.name}`;
let n = 0;
function event(o: { verb: string; uri: string; resource?: string; subresource?: string; apiGroup?: string; namespace?: string; code?: number; decision?: string; stage?: string; id?: string; username?: string; at?: string }): string {
  return JSON.stringify({
    kind: 'Event',
    level: 'Metadata',
    auditID: o.id ?? `id-${n++}`,
    stage: o.stage ?? 'ResponseComplete',
    requestURI: o.uri,
    verb: o.verb,
    user: { username: o.username ?? user },
    ...(o.resource ? { objectRef: { resource: o.resource, ...(o.subresource ? { subresource: o.subresource } : {}), ...(o.apiGroup ? { apiGroup: o.apiGroup } : {}), ...(o.namespace ? { namespace: o.namespace } : {}) } } : {}),
    responseStatus: { metadata: {}, ...(o.code ? { code: o.code } : {}) },
    requestReceivedTimestamp: o.at ?? '2026-11-24T16:00:01.000000Z',
    annotations: o.decision ? { 'authorization.k8s.io/decision': o.decision } : {},
  });
}
const since = new Date('2026-11-24T16:00:00Z');

describe('grantsFor', () => {
  it('expands the rules bound to the ServiceAccount, each with its binding scope', () => {
    const grants = grantsFor(manifests, sa).map((g) => `${g.apiGroup}|${g.resource}|${g.verb}|${g.scope}`);
    expect(grants).toEqual([
      'hypershift.openshift.io|hostedclusters|get|cluster',
      'hypershift.openshift.io|hostedclusters|watch|cluster',
      'hypershift.openshift.io|hostedclusters/status|patch|cluster',
      '|secrets|get|clusters',
      '|configmaps|list|autonode-system',
    ]);
  });

  it.each([
    ['a wildcard verb', { apiGroups: [''], resources: ['secrets'], verbs: ['*'] }, /wildcard/],
    ['resourceNames', { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a'] }, /resourceNames/],
  ])('refuses %s rather than half-checking it', (_, rule, message) => {
    expect(() => grantsFor([clusterRole('r', [rule]), clusterBinding('r')], sa)).toThrow(message);
  });

  it('refuses a binding to a role the manifests do not define', () => {
    expect(() => grantsFor([clusterBinding('missing')], sa)).toThrow(/do not define/);
  });
});

describe('requestsOf and rbacUsage', () => {
  const log = [
    // a watch: two stages, one request
    event({ id: 'w', stage: 'ResponseStarted', verb: 'watch', uri: '/apis/hypershift.openshift.io/v1beta1/hostedclusters?watch=true', resource: 'hostedclusters', apiGroup: 'hypershift.openshift.io', code: 200, decision: 'allow' }),
    event({ id: 'w', verb: 'watch', uri: '/apis/hypershift.openshift.io/v1beta1/hostedclusters?watch=true', resource: 'hostedclusters', apiGroup: 'hypershift.openshift.io', code: 200, decision: 'allow' }),
    event({ verb: 'patch', uri: '/apis/hypershift.openshift.io/v1beta1/namespaces/clusters/hostedclusters/a/status', resource: 'hostedclusters', subresource: 'status', apiGroup: 'hypershift.openshift.io', namespace: 'clusters', code: 200, decision: 'allow' }),
    event({ verb: 'get', uri: '/api/v1/namespaces/clusters/secrets/a-admin-kubeconfig', resource: 'secrets', namespace: 'clusters', code: 200, decision: 'allow' }),
    // denied: a Secret in a namespace nobody bound
    event({ verb: 'get', uri: '/api/v1/namespaces/other/secrets/x', resource: 'secrets', namespace: 'other', code: 403, decision: 'forbid' }),
    // allowed by a default role, not by the manifests
    event({ verb: 'create', uri: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', resource: 'selfsubjectaccessreviews', apiGroup: 'authorization.k8s.io', code: 201, decision: 'allow' }),
    event({ verb: 'get', uri: '/apis', code: 200, decision: 'allow' }),
    // not ours: another user, or before the test
    event({ verb: 'list', uri: '/api/v1/namespaces/autonode-system/configmaps', resource: 'configmaps', namespace: 'autonode-system', code: 200, decision: 'allow', username: 'admin' }),
    event({ verb: 'list', uri: '/api/v1/namespaces/autonode-system/configmaps', resource: 'configmaps', namespace: 'autonode-system', code: 200, decision: 'allow', at: '2026-11-24T15:59:59.000000Z' }),
  ].join('\n');
  const requests = requestsOf(`${log}\n`, user, since);
  const usage = rbacUsage(grantsFor(manifests, sa), requests);

  it('reads each request once, for this user since the start only', () => {
    expect(requests).toHaveLength(6);
    expect(requests.find((r) => r.auditID === 'w')).toEqual(expect.objectContaining<Partial<AuditedRequest>>({ verb: 'watch', apiGroup: 'hypershift.openshift.io', resource: 'hostedclusters', code: 200 }));
  });

  it('finds the denial, the grants never used, and what no grant of the manifests allowed', () => {
    expect(usage.denied.map((r) => r.requestURI)).toEqual(['/api/v1/namespaces/other/secrets/x']);
    // get on hostedclusters was granted and never used; configmaps list only before the start or by another user
    expect(usage.unused.map((g) => `${g.resource} ${g.verb}`)).toEqual(['hostedclusters get', 'configmaps list']);
    expect(usage.used.map((u) => `${u.grant.resource} ${u.grant.verb} ${u.requests.length}`)).toEqual(['hostedclusters watch 1', 'hostedclusters/status patch 1', 'secrets get 1']);
    expect(usage.uncovered.map((r) => r.resource)).toEqual(['selfsubjectaccessreviews']);
    expect(usage.nonResource.map((r) => r.requestURI)).toEqual(['/apis']);
  });

  it('a namespaced grant is not used by the same request in another namespace', () => {
    const elsewhere = requestsOf(event({ verb: 'get', uri: '/api/v1/namespaces/kube-system/secrets/y', resource: 'secrets', namespace: 'kube-system', code: 200, decision: 'allow' }), user, since);
    const u = rbacUsage(grantsFor(manifests, sa), elsewhere);
    expect(u.unused.map((g) => `${g.resource} ${g.verb} ${g.scope}`)).toContain('secrets get clusters');
    expect(u.uncovered).toHaveLength(1);
  });

  it('prints one row per grant, unused ones marked', () => {
    const table = usageTable(usage);
    expect(table.split('\n')).toHaveLength(1 + 5);
    expect(table).toMatch(/configmaps\s+list\s+autonode-system\s+0 \(UNUSED\)/);
  });
});
