// A pod's effective resource request, as the kube-scheduler and Karpenter count it
// (k8s.io/component-helpers/resource PodRequests; KEP-753 for sidecars):
//
//   regular   = Σ containers + Σ restartable init containers (sidecars run alongside)
//   init(i)   = requests of init container i + Σ sidecars declared before it
//   effective = max(regular, max_i init(i)) + pod overhead, and pods = 1
//
// A sidecar is an init container with restartPolicy: Always. It keeps running, so it is
// part of the steady state *and* of every later init container's peak.
import { z } from 'zod';
import { quantity } from './quantity';
import { addResources, maxResources, parseResourceList, ResourceName, type ResourceList } from './resources';

// Kubernetes accepts quantities as int-or-string in YAML ("cpu: 2").
const quantityInput = z.union([z.string(), z.number()]).transform((value) => String(value));
const resourceMapInput = z.record(z.string(), quantityInput);

const containerSchema = z.object({
  name: z.string().optional(),
  restartPolicy: z.string().optional(),
  resources: z.object({
    requests: resourceMapInput.optional(),
    limits: resourceMapInput.optional(),
  }).optional(),
});

/** Only the parts of a PodSpec that determine its requests; other fields are ignored. */
export const podResourceSpecSchema = z.object({
  containers: z.array(containerSchema).default([]),
  initContainers: z.array(containerSchema).default([]),
  overhead: resourceMapInput.optional(),
});

export type PodResourceSpec = z.infer<typeof podResourceSpecSchema>;
type ContainerSpec = z.infer<typeof containerSchema>;

export type PodRequestsResult =
  | { readonly ok: true; readonly requests: ResourceList }
  | { readonly ok: false; readonly reason: string };

/**
 * Requests of one container. The API server defaults a missing request to its limit
 * (e.g. limits.cpu: 1 alone means requests.cpu: 1); manifests read offline by
 * `autonode plan` have not been through the API server, so we apply that default here.
 */
function containerRequests(container: ContainerSpec): PodRequestsResult {
  const requests = parseResourceList(container.resources?.requests);
  if (!requests.ok) return { ok: false, reason: `container ${container.name ?? '?'}: ${requests.reason}` };
  const limits = parseResourceList(container.resources?.limits);
  if (!limits.ok) return { ok: false, reason: `container ${container.name ?? '?'}: ${limits.reason}` };
  return { ok: true, requests: { ...limits.resources, ...requests.resources } };
}

export function podRequests(spec: PodResourceSpec): PodRequestsResult {
  let regular: ResourceList = {};
  for (const container of spec.containers) {
    const requests = containerRequests(container);
    if (!requests.ok) return requests;
    regular = addResources(regular, requests.requests);
  }

  let sidecars: ResourceList = {};
  let initPeak: ResourceList = {};
  for (const container of spec.initContainers) {
    const requests = containerRequests(container);
    if (!requests.ok) return requests;
    let whileRunning: ResourceList;
    if (container.restartPolicy === 'Always') {
      regular = addResources(regular, requests.requests);
      sidecars = addResources(sidecars, requests.requests);
      whileRunning = sidecars;
    } else {
      whileRunning = addResources(requests.requests, sidecars);
    }
    initPeak = maxResources(initPeak, whileRunning);
  }

  const overhead = parseResourceList(spec.overhead);
  if (!overhead.ok) return { ok: false, reason: `overhead: ${overhead.reason}` };
  const effective = addResources(maxResources(regular, initPeak), overhead.resources);
  return { ok: true, requests: Object.freeze({ ...effective, [ResourceName.pods]: quantity('1') }) };
}
