// Kubernetes workload objects → the packing core's pods, DaemonSets and nodes.
// Controllers are expanded to the pods they would create: Deployment/ReplicaSet/
// StatefulSet to `replicas` pods named <name>-<i>, a Job to min(parallelism, completions).
import { podRequests } from '../scheduling/podrequests';
import { formatResourceList } from '../scheduling/resources';
import type { BoundPod, DaemonSetInput, ExistingNodeInput, HostPort, PendingPod } from '../packing/input';
import { daemonSetSchema, jobSchema, nodeSchema, podSchema, replicatedSchema, type PodSpec } from './schemas';

export type Workload =
  | { readonly kind: 'pending'; readonly pods: PendingPod[] }
  /** A pod with spec.nodeName: runs (or will) on that node or NodeClaim. */
  | { readonly kind: 'bound'; readonly nodeName: string; readonly pod: BoundPod }
  | { readonly kind: 'daemonSet'; readonly daemonSet: DaemonSetInput }
  | { readonly kind: 'node'; readonly node: ExistingNodeInput }
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'invalid'; readonly reason: string }
  | { readonly kind: 'other' };

const workloadKinds = new Set(['Pod', 'Deployment', 'ReplicaSet', 'StatefulSet', 'Job', 'DaemonSet', 'Node']);

function hostPorts(spec: PodSpec): HostPort[] {
  return spec.containers.flatMap((c) => c.ports.filter((p) => p.hostPort !== undefined && p.hostPort > 0)
    .map((p) => ({ port: p.hostPort ?? 0, protocol: p.protocol ?? 'TCP', hostIP: p.hostIP ?? '' })));
}

type Converted<T> = { ok: true; value: T } | { ok: false; reason: string };

function pendingPod(namespace: string, name: string, labels: Record<string, string>, spec: PodSpec): Converted<PendingPod> {
  const requests = podRequests(spec);
  if (!requests.ok) return requests;
  const node = spec.affinity?.nodeAffinity;
  return {
    ok: true,
    value: {
      namespace, name, labels,
      requests: formatResourceList(requests.requests),
      nodeSelector: spec.nodeSelector,
      requiredNodeAffinity: (node?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []).map((t) => t.matchExpressions),
      preferredNodeAffinity: (node?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((p) => ({ weight: p.weight, requirements: p.preference.matchExpressions })),
      tolerations: spec.tolerations,
      topologySpread: spec.topologySpreadConstraints,
      podAffinity: {
        required: spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [],
        preferred: spec.affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [],
      },
      podAntiAffinity: {
        required: spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [],
        preferred: spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [],
      },
      hostPorts: hostPorts(spec),
    },
  };
}

function issues(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return error.issues.slice(0, 3).map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('; ');
}

/** One parsed manifest → what it contributes to a plan. Never throws on bad input. */
export function expandWorkload(doc: unknown): Workload {
  const header = typeof doc === 'object' && doc !== null && 'kind' in doc ? doc.kind : undefined;
  if (typeof header !== 'string' || !workloadKinds.has(header)) return { kind: 'other' };
  switch (header) {
    case 'Pod': {
      const parsed = podSchema.safeParse(doc);
      if (!parsed.success) return { kind: 'invalid', reason: issues(parsed.error) };
      const { metadata, spec, status } = parsed.data;
      if (status?.phase === 'Succeeded' || status?.phase === 'Failed') return { kind: 'skipped', reason: `pod has finished (${status.phase})` };
      const pod = pendingPod(metadata.namespace ?? 'default', metadata.name, metadata.labels ?? {}, spec);
      if (!pod.ok) return { kind: 'invalid', reason: pod.reason };
      if (spec.nodeName !== undefined) {
        return {
          kind: 'bound', nodeName: spec.nodeName,
          pod: { namespace: pod.value.namespace, name: pod.value.name, labels: pod.value.labels, requests: pod.value.requests, hostPorts: pod.value.hostPorts, antiAffinity: pod.value.podAntiAffinity.required },
        };
      }
      return { kind: 'pending', pods: [pod.value] };
    }
    case 'Deployment':
    case 'ReplicaSet':
    case 'StatefulSet':
    case 'Job': {
      const parsed = header === 'Job' ? jobSchema.safeParse(doc) : replicatedSchema.safeParse(doc);
      if (!parsed.success) return { kind: 'invalid', reason: issues(parsed.error) };
      const { metadata, spec } = parsed.data;
      const count = 'replicas' in spec ? spec.replicas : Math.min(spec.parallelism, spec.completions);
      const pods: PendingPod[] = [];
      for (let i = 0; i < count; i++) {
        const pod = pendingPod(metadata.namespace ?? 'default', `${metadata.name}-${i}`, spec.template.metadata?.labels ?? {}, spec.template.spec);
        if (!pod.ok) return { kind: 'invalid', reason: pod.reason };
        pods.push(pod.value);
      }
      return { kind: 'pending', pods };
    }
    case 'DaemonSet': {
      const parsed = daemonSetSchema.safeParse(doc);
      if (!parsed.success) return { kind: 'invalid', reason: issues(parsed.error) };
      const { metadata, spec } = parsed.data;
      const pod = pendingPod(metadata.namespace ?? 'default', metadata.name, spec.template.metadata?.labels ?? {}, spec.template.spec);
      if (!pod.ok) return { kind: 'invalid', reason: pod.reason };
      const { namespace, name, requests, nodeSelector, requiredNodeAffinity, tolerations, hostPorts: ports } = pod.value;
      return { kind: 'daemonSet', daemonSet: { namespace, name, requests, nodeSelector, requiredNodeAffinity, tolerations, hostPorts: ports } };
    }
    case 'Node': {
      const parsed = nodeSchema.safeParse(doc);
      if (!parsed.success) return { kind: 'invalid', reason: issues(parsed.error) };
      const { metadata, spec, status } = parsed.data;
      const allocatable = status?.allocatable ?? status?.capacity;
      if (allocatable === undefined) return { kind: 'invalid', reason: 'status.allocatable is missing: the node\'s capacity is unknown' };
      return { kind: 'node', node: { name: metadata.name, labels: metadata.labels ?? {}, taints: spec.taints, allocatable, pods: [] } };
    }
    default:
      return { kind: 'other' };
  }
}
