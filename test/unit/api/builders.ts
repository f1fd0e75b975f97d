// Test builders: minimal valid manifests, and a helper to break one field at a path.

export type Doc = Record<string, unknown>;

export function aNodePool(spec: Doc = {}): Doc {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['m'] },
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        },
      },
      ...spec,
    },
  };
}

export function anEC2NodeClass(spec: Doc = {}): Doc {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      amiFamily: 'Custom',
      amiSelectorTerms: [{ id: 'ami-00722494a4a3fa2af' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'infra-1' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'infra-1' } }],
      ...spec,
    },
  };
}

export function aProvisioner(spec: Doc = {}): Doc {
  return { apiVersion: 'karpenter.sh/v1alpha5', kind: 'Provisioner', metadata: { name: 'default' }, spec: { provider: {}, ...spec } };
}

/** A deep copy of `doc` with the value at `path` (`a.b[2].c`, `labels["x/y"]`) replaced or deleted. */
export function withField(doc: Doc, path: string, value: unknown): Doc {
  const copy: Doc = structuredClone(doc);
  const segments = [...path.matchAll(/([^.[\]"]+)|\[(\d+)\]|\["([^"]+)"\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : (m[3] ?? m[1]!)));
  let node: unknown = copy;
  segments.slice(0, -1).forEach((segment, i) => {
    const next = Reflect.get(node as object, segment);
    if (next === undefined) Reflect.set(node as object, segment, typeof segments[i + 1] === 'number' ? [] : {});
    node = Reflect.get(node as object, segment);
  });
  const last = segments[segments.length - 1]!;
  if (value === undefined) Reflect.deleteProperty(node as object, last);
  else Reflect.set(node as object, last, value);
  return copy;
}
