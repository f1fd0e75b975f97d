/**
 * What a set of RBAC manifests grants one ServiceAccount, and what that ServiceAccount did,
 * from a kube-apiserver's audit log (audit.k8s.io/v1 Events, JSON lines, Metadata level):
 * which requests were denied, which grants were used and by what, which grants never were.
 * The API server's own record, so nothing the workers do escapes it — a request made by a
 * library behind autonode's back (discovery, a watch) is in it too.
 */
import { z } from 'zod';

/** One (apiGroup, resource[/subresource], verb) a Role or ClusterRole grants, and where. */
export interface Grant {
  apiGroup: string;
  /** `secrets`, `hostedclusters/status` */
  resource: string;
  verb: string;
  /** `cluster` (a ClusterRoleBinding) or the namespace of the RoleBinding that grants it */
  scope: string;
  /** the role and binding it comes from, for messages */
  source: string;
}

const RuleSchema = z.object({
  apiGroups: z.array(z.string()).default([]),
  resources: z.array(z.string()).default([]),
  verbs: z.array(z.string()),
  resourceNames: z.array(z.string()).optional(),
  nonResourceURLs: z.array(z.string()).optional(),
});
const RoleSchema = z.object({ kind: z.enum(['Role', 'ClusterRole']), metadata: z.object({ name: z.string(), namespace: z.string().optional() }), rules: z.array(RuleSchema).default([]) });
const BindingSchema = z.object({
  kind: z.enum(['RoleBinding', 'ClusterRoleBinding']),
  metadata: z.object({ name: z.string(), namespace: z.string().optional() }),
  roleRef: z.object({ kind: z.enum(['Role', 'ClusterRole']), name: z.string() }),
  subjects: z.array(z.object({ kind: z.string(), name: z.string(), namespace: z.string().optional() })).default([]),
});

/**
 * Every grant the manifests give `serviceAccount` through their own bindings. Wildcards and
 * resourceNames are refused rather than half-understood: the manifests use neither, and a
 * check that silently skipped them would pass on exactly the grants worth looking at.
 */
export function grantsFor(objects: readonly { kind: string }[], serviceAccount: { namespace: string; name: string }): Grant[] {
  const roles = objects.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole').map((o) => RoleSchema.parse(o));
  const bindings = objects.filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding').map((o) => BindingSchema.parse(o));
  const grants: Grant[] = [];
  for (const binding of bindings) {
    if (!binding.subjects.some((s) => s.kind === 'ServiceAccount' && s.name === serviceAccount.name && s.namespace === serviceAccount.namespace)) continue;
    const scope = binding.kind === 'ClusterRoleBinding' ? 'cluster' : (binding.metadata.namespace ?? 'default');
    const role = roles.find((r) => r.kind === binding.roleRef.kind && r.metadata.name === binding.roleRef.name && (r.kind === 'ClusterRole' || (r.metadata.namespace ?? 'default') === scope));
    if (!role) throw new Error(`${binding.kind} ${binding.metadata.name} binds ${binding.roleRef.kind} ${binding.roleRef.name}, which the manifests do not define`);
    for (const rule of role.rules) {
      if (rule.nonResourceURLs?.length) throw new Error(`${role.kind} ${role.metadata.name}: nonResourceURLs are not checked here`);
      if (rule.resourceNames?.length) throw new Error(`${role.kind} ${role.metadata.name}: resourceNames are not checked here`);
      for (const apiGroup of rule.apiGroups)
        for (const resource of rule.resources)
          for (const verb of rule.verbs) {
            if ([apiGroup, resource, verb].includes('*')) throw new Error(`${role.kind} ${role.metadata.name} grants a wildcard (${apiGroup}/${resource} ${verb}): name what is needed`);
            grants.push({ apiGroup, resource, verb, scope, source: `${role.kind} ${role.metadata.name} via ${binding.kind} ${binding.metadata.name}` });
          }
    }
  }
  return grants;
}

const AuditEventSchema = z.object({
  auditID: z.string(),
  stage: z.string(),
  verb: z.string(),
  requestURI: z.string(),
  requestReceivedTimestamp: z.string(),
  user: z.object({ username: z.string() }),
  objectRef: z.object({ resource: z.string().optional(), subresource: z.string().optional(), apiGroup: z.string().optional(), namespace: z.string().optional(), name: z.string().optional() }).optional(),
  responseStatus: z.object({ code: z.number().optional() }).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

/** One request, once (an audit log has a ResponseStarted and a ResponseComplete line for a watch). */
export interface AuditedRequest {
  auditID: string;
  verb: string;
  requestURI: string;
  at: string;
  /** undefined for a non-resource request (/api, /apis, /version) */
  apiGroup?: string;
  resource?: string;
  namespace?: string;
  name?: string;
  code?: number;
  /** the authorizer's `authorization.k8s.io/decision`: allow or forbid */
  decision?: string;
  reason?: string;
}

/** The requests of `username` received at or after `since`, from an audit log's text. */
export function requestsOf(auditLog: string, username: string, since: Date): AuditedRequest[] {
  const byId = new Map<string, AuditedRequest>();
  for (const line of auditLog.split('\n')) {
    if (line.trim() === '') continue;
    const event = AuditEventSchema.parse(JSON.parse(line));
    if (event.user.username !== username || Date.parse(event.requestReceivedTimestamp) < since.getTime()) continue;
    const ref = event.objectRef;
    const previous = byId.get(event.auditID);
    byId.set(event.auditID, {
      auditID: event.auditID,
      verb: event.verb,
      requestURI: event.requestURI,
      at: event.requestReceivedTimestamp,
      ...(ref?.resource ? { apiGroup: ref.apiGroup ?? '', resource: ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource } : {}),
      ...(ref?.namespace ? { namespace: ref.namespace } : {}),
      ...(ref?.name ? { name: ref.name } : {}),
      // the complete stage's code wins over the started stage's (a watch's is 200 at both)
      ...((event.responseStatus?.code ?? previous?.code) !== undefined ? { code: event.responseStatus?.code ?? previous?.code } : {}),
      ...(event.annotations?.['authorization.k8s.io/decision'] ? { decision: event.annotations['authorization.k8s.io/decision'] } : {}),
      ...(event.annotations?.['authorization.k8s.io/reason'] ? { reason: event.annotations['authorization.k8s.io/reason'] } : {}),
    });
  }
  return [...byId.values()].sort((a, b) => a.at.localeCompare(b.at) || a.auditID.localeCompare(b.auditID));
}

const covers = (grant: Grant, request: AuditedRequest) =>
  request.resource !== undefined && grant.apiGroup === request.apiGroup && grant.resource === request.resource && grant.verb === request.verb && (grant.scope === 'cluster' || grant.scope === request.namespace);

export interface RbacUsage {
  /** requests the API server refused (authorizer said forbid, or 403) */
  denied: AuditedRequest[];
  /** each grant and the allowed requests that needed it */
  used: { grant: Grant; requests: AuditedRequest[] }[];
  /** grants no request needed */
  unused: Grant[];
  /** allowed resource requests no grant of the manifests covers (some default role allowed them) */
  uncovered: AuditedRequest[];
  /** allowed non-resource requests (discovery, /version): every authenticated user may */
  nonResource: AuditedRequest[];
}

export function rbacUsage(grants: readonly Grant[], requests: readonly AuditedRequest[]): RbacUsage {
  const denied = requests.filter((r) => r.decision === 'forbid' || r.code === 403);
  const allowed = requests.filter((r) => !denied.includes(r));
  const used = grants.map((grant) => ({ grant, requests: allowed.filter((r) => covers(grant, r)) }));
  return {
    denied,
    used: used.filter((u) => u.requests.length > 0),
    unused: used.filter((u) => u.requests.length === 0).map((u) => u.grant),
    uncovered: allowed.filter((r) => r.resource !== undefined && !grants.some((g) => covers(g, r))),
    nonResource: allowed.filter((r) => r.resource === undefined),
  };
}

export const describeGrant = (g: Grant) => `${g.apiGroup || 'core'} ${g.resource} ${g.verb} (${g.scope === 'cluster' ? 'all namespaces' : `namespace ${g.scope}`}; ${g.source})`;
export const describeRequest = (r: AuditedRequest) => `${r.verb} ${r.requestURI} → ${r.code ?? '?'}${r.decision ? ` (${r.decision}${r.reason ? `: ${r.reason}` : ''})` : ''}`;

/** The used-permission table: one line per grant, how often and an example. */
export function usageTable(usage: RbacUsage): string {
  const rows = [
    ['apiGroup', 'resource', 'verb', 'scope', 'requests', 'e.g.'],
    ...usage.used.map((u) => [u.grant.apiGroup || 'core', u.grant.resource, u.grant.verb, u.grant.scope, String(u.requests.length), `${u.requests[0]?.verb ?? ''} ${u.requests[0]?.requestURI ?? ''}`]),
    ...usage.unused.map((g) => [g.apiGroup || 'core', g.resource, g.verb, g.scope, '0 (UNUSED)', '']),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}
