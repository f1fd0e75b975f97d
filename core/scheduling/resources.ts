// Resource lists: resource name → quantity in nano-units (see quantity.ts for why).
// Plain frozen records, never mutated in place; every operation returns a new list.
import { formatQuantity, parseQuantity, type QuantityFormat } from './quantity';

export type ResourceList = Readonly<Record<string, bigint>>;

/** The Kubernetes (JSON/YAML) form: resource name → quantity string. */
export type ResourceListStrings = Readonly<Record<string, string>>;

export const ResourceName = {
  cpu: 'cpu',
  memory: 'memory',
  ephemeralStorage: 'ephemeral-storage',
  pods: 'pods',
  nvidiaGpu: 'nvidia.com/gpu',
  amdGpu: 'amd.com/gpu',
  awsNeuron: 'aws.amazon.com/neuron',
  awsNeuronCore: 'aws.amazon.com/neuroncore',
  habanaGaudi: 'habana.ai/gaudi',
  efa: 'vpc.amazonaws.com/efa',
} as const;

export type ResourceListParseResult =
  | { readonly ok: true; readonly resources: ResourceList }
  | { readonly ok: false; readonly reason: string };

export function parseResourceList(strings: ResourceListStrings | undefined): ResourceListParseResult {
  const resources: Record<string, bigint> = {};
  for (const [name, text] of Object.entries(strings ?? {})) {
    const parsed = parseQuantity(text);
    if (!parsed.ok) return { ok: false, reason: `resource ${name}: ${parsed.reason}` };
    resources[name] = parsed.quantity.nanos;
  }
  return { ok: true, resources: Object.freeze(resources) };
}

/** For literals in code and tests; outside data goes through parseResourceList. */
export function resourceList(strings: ResourceListStrings): ResourceList {
  const parsed = parseResourceList(strings);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.resources;
}

/**
 * The format Kubernetes uses when it prints a computed quantity of this resource:
 * bytes in binary suffixes ("6903Mi"), everything else decimal ("1930m", "29").
 */
export function formatOf(resourceName: string): QuantityFormat {
  const bytes = resourceName === ResourceName.memory || resourceName === ResourceName.ephemeralStorage
    || resourceName === 'storage' || resourceName.startsWith('hugepages-');
  return bytes ? 'BinarySI' : 'DecimalSI';
}

/**
 * A computed quantity of this resource as Kubernetes would print it. Bytes take a binary
 * suffix when they are a whole number of Ki ("6903Mi"); otherwise the decimal form, which
 * is as exact and reads better than a bare byte count ("75G", not "75000000000").
 */
export function formatResource(resourceName: string, nanos: bigint): string {
  if (formatOf(resourceName) === 'BinarySI') {
    const binary = formatQuantity(nanos, 'BinarySI');
    if (/[KMGTPE]i$/.test(binary)) return binary;
  }
  return formatQuantity(nanos, 'DecimalSI');
}

/** Canonical strings, keys sorted so the output is byte-for-byte stable. */
export function formatResourceList(resources: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(resources).sort()) {
    out[name] = formatResource(name, resources[name] ?? 0n);
  }
  return out;
}

function combine(a: ResourceList, b: ResourceList, op: (x: bigint, y: bigint) => bigint): ResourceList {
  const out: Record<string, bigint> = {};
  for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
    out[name] = op(a[name] ?? 0n, b[name] ?? 0n);
  }
  return Object.freeze(out);
}

export function addResources(...lists: readonly ResourceList[]): ResourceList {
  return lists.reduce<ResourceList>((sum, list) => combine(sum, list, (x, y) => x + y), {});
}

/** a − b over the keys of both; may go negative (see clampAtZero). */
export function subtractResources(a: ResourceList, b: ResourceList): ResourceList {
  return combine(a, b, (x, y) => x - y);
}

export function maxResources(...lists: readonly ResourceList[]): ResourceList {
  return lists.reduce<ResourceList>((max, list) => combine(max, list, (x, y) => (x > y ? x : y)), {});
}

export function clampAtZero(resources: ResourceList): ResourceList {
  return combine(resources, {}, (x) => (x < 0n ? 0n : x));
}

export type FitResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string; readonly exceeded: readonly string[] };

/**
 * Whether `requests` fit in `available`. A resource missing from `available` counts as
 * zero, so a pod asking for nvidia.com/gpu does not fit a node without GPUs.
 */
export function fits(requests: ResourceList, available: ResourceList): FitResult {
  const exceeded = Object.keys(requests)
    .filter((name) => (requests[name] ?? 0n) > (available[name] ?? 0n))
    .sort();
  if (exceeded.length === 0) return { ok: true };
  const details = exceeded.map((name) => `${name} ${formatResource(name, requests[name] ?? 0n)} > ${formatResource(name, available[name] ?? 0n)}`);
  return { ok: false, exceeded, reason: `requests exceed available: ${details.join(', ')}` };
}
