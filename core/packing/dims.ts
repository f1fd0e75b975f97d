// Dense resource vectors for the hot loops. Quantities are exact bigints in
// core/scheduling; packing thousands of pods against hundreds of types with bigint maps
// is ~50× slower than Float64Array arithmetic, so the solver maps each resource onto a
// fixed dimension once. Byte resources are counted in bytes, everything else in
// milli-units; both stay far below 2^53 for any real node, so the numbers are exact
// integers. Requests round up and capacities round down, so "fits" never over-promises.
import { NANOS_PER_UNIT } from '../scheduling/quantity';
import { formatOf, parseResourceList, type ResourceListStrings } from '../scheduling/resources';

export type Vec = Float64Array;

export class Dims {
  readonly names: readonly string[];
  private readonly index: ReadonlyMap<string, number>;
  private readonly scale: readonly bigint[];

  /** cpu, memory and pods first (the dimensions every node has), then the rest sorted. */
  constructor(resourceNames: Iterable<string>) {
    const first = ['cpu', 'memory', 'pods'];
    const rest = [...new Set(resourceNames)].filter((name) => !first.includes(name)).sort();
    this.names = [...first, ...rest];
    this.index = new Map(this.names.map((name, i) => [name, i]));
    this.scale = this.names.map((name) => (formatOf(name) === 'BinarySI' ? NANOS_PER_UNIT : 1_000_000n));
  }

  get size(): number {
    return this.names.length;
  }

  zero(): Vec {
    return new Float64Array(this.names.length);
  }

  /**
   * Parses Kubernetes strings into a vector. `round` is 'up' for requests and 'down' for
   * capacities. Unknown resources are impossible by construction (Dims is built from
   * every name in the input). Throws only on malformed quantities, which the input
   * layer has already rejected.
   */
  vector(strings: ResourceListStrings | undefined, round: 'up' | 'down'): Vec {
    const parsed = parseResourceList(strings);
    if (!parsed.ok) throw new Error(parsed.reason);
    const out = this.zero();
    for (const [name, nanos] of Object.entries(parsed.resources)) {
      const i = this.index.get(name);
      const scale = this.scale[i ?? -1];
      if (i === undefined || scale === undefined) throw new Error(`resource ${name} is not a known dimension`);
      const whole = nanos / scale;
      const exact = whole * scale === nanos;
      out[i] = Number(round === 'up' && !exact && nanos > 0n ? whole + 1n : whole);
    }
    return out;
  }

  /** Back to Kubernetes strings, keys sorted, zeros dropped. */
  format(vector: Vec): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of [...this.names].sort()) {
      const i = this.index.get(name) ?? 0;
      const value = vector[i] ?? 0;
      if (value === 0) continue;
      if (formatOf(name) === 'BinarySI') out[name] = formatBytes(value);
      else out[name] = formatMilli(value);
    }
    return out;
  }

  indexOf(name: string): number | undefined {
    return this.index.get(name);
  }

  describe(vector: Vec): string {
    return Object.entries(this.format(vector)).map(([name, value]) => `${name} ${value}`).join(', ');
  }
}

function formatMilli(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

function formatBytes(bytes: number): string {
  const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
  let value = bytes;
  let power = 0;
  while (power < suffixes.length - 1 && value % 1024 === 0 && value !== 0) {
    value /= 1024;
    power += 1;
  }
  return `${value}${suffixes[power] ?? ''}`;
}

export function add(a: Vec, b: Vec): Vec {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] ?? 0) + (b[i] ?? 0);
  return out;
}

export function addInto(target: Vec, b: Vec): void {
  for (let i = 0; i < target.length; i++) target[i] = (target[i] ?? 0) + (b[i] ?? 0);
}

export function subtract(a: Vec, b: Vec): Vec {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] ?? 0) - (b[i] ?? 0);
  return out;
}

/** used + extra ≤ capacity in every dimension. */
export function fitsWith(used: Vec, extra: Vec, capacity: Vec): boolean {
  for (let i = 0; i < capacity.length; i++) {
    if ((used[i] ?? 0) + (extra[i] ?? 0) > (capacity[i] ?? 0)) return false;
  }
  return true;
}

/** Greatest common divisor of two integers (requests and capacities are exact integers). */
export function gcd(a: number, b: number): number {
  let x = Math.abs(a);
  let y = Math.abs(b);
  while (y > 0) [x, y] = [y, x % y];
  return x;
}

export function lessOrEqual(a: Vec, b: Vec): boolean {
  for (let i = 0; i < a.length; i++) if ((a[i] ?? 0) > (b[i] ?? 0)) return false;
  return true;
}

export function maxOf(a: Vec, b: Vec): Vec {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = Math.max(a[i] ?? 0, b[i] ?? 0);
  return out;
}

export function minOf(a: Vec, b: Vec): Vec {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = Math.min(a[i] ?? 0, b[i] ?? 0);
  return out;
}

export function dot(a: Vec, b: Vec): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}
