import { podRequests, podResourceSpecSchema, type PodResourceSpec } from '../../../core/scheduling/podrequests';
import { formatResourceList } from '../../../core/scheduling/resources';

type ContainerOptions = { name?: string; cpu?: string; memory?: string; limits?: Record<string, string>; sidecar?: boolean };

function aContainer({ name = 'c', cpu, memory, limits, sidecar = false }: ContainerOptions = {}): PodResourceSpec['containers'][number] {
  const requests: Record<string, string> = {};
  if (cpu !== undefined) requests.cpu = cpu;
  if (memory !== undefined) requests.memory = memory;
  return { name, ...(sidecar ? { restartPolicy: 'Always' } : {}), resources: { requests, ...(limits ? { limits } : {}) } };
}

function aPodSpec(spec: Partial<PodResourceSpec> = {}): PodResourceSpec {
  return { containers: [aContainer({ cpu: '100m', memory: '128Mi' })], initContainers: [], ...spec };
}

function requestsOf(spec: PodResourceSpec): Record<string, string> {
  const result = podRequests(spec);
  if (!result.ok) throw new Error(result.reason);
  return formatResourceList(result.requests);
}

describe('pod resource requests', () => {
  it('sums regular containers and counts one pod', () => {
    const spec = aPodSpec({ containers: [aContainer({ cpu: '100m', memory: '128Mi' }), aContainer({ cpu: '250m', memory: '1Gi' })] });
    expect(requestsOf(spec)).toEqual({ cpu: '350m', memory: '1152Mi', pods: '1' });
  });

  it('uses the largest init container when it exceeds the regular containers', () => {
    const spec = aPodSpec({
      containers: [aContainer({ cpu: '100m', memory: '128Mi' })],
      initContainers: [aContainer({ cpu: '2', memory: '64Mi' }), aContainer({ cpu: '500m', memory: '256Mi' })],
    });
    // cpu: max(100m, 2, 500m) = 2; memory: max(128Mi, 64Mi, 256Mi) = 256Mi — per resource.
    expect(requestsOf(spec)).toEqual({ cpu: '2', memory: '256Mi', pods: '1' });
  });

  it('adds sidecars to the steady state and to every later init container (KEP-753)', () => {
    const spec = aPodSpec({
      containers: [aContainer({ cpu: '1', memory: '1Gi' })],
      initContainers: [
        aContainer({ name: 'before', cpu: '1500m', memory: '100Mi' }),
        aContainer({ name: 'proxy', cpu: '200m', memory: '300Mi', sidecar: true }),
        aContainer({ name: 'after', cpu: '1', memory: '2Gi' }),
      ],
    });
    // regular = 1 + 200m = 1200m cpu, 1Gi + 300Mi = 1324Mi
    // init peaks: before = 1500m/100Mi; proxy = 200m/300Mi; after = 1 + 200m = 1200m / 2Gi + 300Mi = 2348Mi
    expect(requestsOf(spec)).toEqual({ cpu: '1500m', memory: '2348Mi', pods: '1' });
  });

  it('ignores sidecars declared after an init container for that container', () => {
    const spec = aPodSpec({
      containers: [aContainer({ cpu: '100m' })],
      initContainers: [aContainer({ name: 'first', cpu: '3' }), aContainer({ name: 'proxy', cpu: '1', sidecar: true })],
    });
    // first runs alone: 3; proxy's peak is 1; regular = 100m + 1 = 1100m.
    expect(requestsOf(spec)).toEqual({ cpu: '3', pods: '1' });
  });

  it('adds pod overhead on top of the effective requests', () => {
    const spec = aPodSpec({ containers: [aContainer({ cpu: '1', memory: '1Gi' })], overhead: { cpu: '250m', memory: '120Mi' } });
    expect(requestsOf(spec)).toEqual({ cpu: '1250m', memory: '1144Mi', pods: '1' });
  });

  it('defaults a missing request to its limit, as the API server does', () => {
    const spec = aPodSpec({ containers: [aContainer({ cpu: '500m', limits: { cpu: '2', memory: '1Gi' } })] });
    expect(requestsOf(spec)).toEqual({ cpu: '500m', memory: '1Gi', pods: '1' });
  });

  it('parses integer quantities from YAML and ignores unrelated fields', () => {
    const spec = podResourceSpecSchema.parse({
      nodeSelector: { a: 'b' },
      containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: 2, memory: '1Gi' } } }],
    });
    expect(requestsOf(spec)).toEqual({ cpu: '2', memory: '1Gi', pods: '1' });
  });

  it('names the container with a malformed quantity', () => {
    const result = podRequests(aPodSpec({ containers: [aContainer({ name: 'web', cpu: 'lots' })] }));
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/container web: resource cpu: quantity "lots"/) });
  });
});
