// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource), exactly.
//
// A quantity is held as a bigint count of nano-units: Kubernetes itself never keeps more
// precision than 10^-9 (ParseQuantity rounds anything finer *up*, away from zero), so
// nanos are exact for every value Kubernetes can represent, and bigint never overflows.
// Rejected alternative: JS numbers in milli-units lose exactness above 2^53 milli-bytes
// (~9 TiB), which real instance types exceed (u-24tb1 has 24 TiB).
//
// Serialised form is always the Kubernetes string ("1930m", "6903Mi"): bigint is not
// JSON, and workflow payloads must be plain JSON (ARCHITECTURE.md), so values cross
// boundaries as strings and are parsed once at the edge of a computation.

/** How Kubernetes prints a quantity: keeps the family of suffix it was written with. */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface ParsedQuantity {
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

export type QuantityParseResult =
  | { readonly ok: true; readonly quantity: ParsedQuantity }
  | { readonly ok: false; readonly reason: string };

export const NANOS_PER_UNIT = 1_000_000_000n;

const decimalSuffixes: Readonly<Record<string, number>> = {
  n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18,
};
const binarySuffixes: Readonly<Record<string, number>> = {
  Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60,
};

// The grammar of parseQuantityString in apimachinery quantity.go: sign, digits, optional
// fraction, then a suffix made of [eEinumkKMGTP]* optionally followed by a signed integer.
// Kubernetes also accepts strings with no digits at all ("-", "."), reading them as 0;
// we reject those as typos rather than silently requesting nothing.
const quantityPattern = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*(?:[+-]?[0-9]+)?)$/;

type Suffix =
  | { readonly base: 10; readonly exponent: number; readonly format: 'DecimalSI' | 'DecimalExponent' }
  | { readonly base: 2; readonly exponent: number; readonly format: 'BinarySI' };

function interpretSuffix(suffix: string): Suffix | undefined {
  const decimal = decimalSuffixes[suffix];
  if (decimal !== undefined) return { base: 10, exponent: decimal, format: 'DecimalSI' };
  const binary = binarySuffixes[suffix];
  if (binary !== undefined) return { base: 2, exponent: binary, format: 'BinarySI' };
  // "e3", "E-2", "e+6": a decimal exponent. A lone "E" is exa, handled above.
  const exponent = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
  if (exponent?.[1] !== undefined) {
    const value = Number(exponent[1]);
    if (Number.isSafeInteger(value)) return { base: 10, exponent: value, format: 'DecimalExponent' };
  }
  return undefined;
}

/** Integer division rounding the magnitude up, as Kubernetes rounds to nano precision. */
function divideRoundingUp(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  return quotient * denominator === numerator ? quotient : quotient + 1n;
}

/** Parses a Kubernetes quantity string ("100m", "1.5Gi", "1e3", "2k"). */
export function parseQuantity(text: string): QuantityParseResult {
  const match = quantityPattern.exec(text);
  if (match === null) return { ok: false, reason: `quantity "${text}" does not match the Kubernetes quantity format (e.g. "100m", "1.5Gi", "2")` };
  const [, sign = '', whole = '', fraction = '', suffixText = ''] = match;
  if (whole === '' && fraction === '') return { ok: false, reason: `quantity "${text}" has no digits` };
  const suffix = interpretSuffix(suffixText);
  if (suffix === undefined) return { ok: false, reason: `quantity "${text}" has an unknown suffix "${suffixText}" (use n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent like e3)` };

  // value = digits × 10^-len(fraction) × base^exponent, held as numerator/denominator.
  let numerator = BigInt((whole === '' ? '0' : whole) + fraction);
  let denominator = 10n ** BigInt(fraction.length);
  if (suffix.base === 2) numerator *= 2n ** BigInt(suffix.exponent);
  else if (suffix.exponent >= 0) numerator *= 10n ** BigInt(suffix.exponent);
  else denominator *= 10n ** BigInt(-suffix.exponent);

  const magnitude = divideRoundingUp(numerator * NANOS_PER_UNIT, denominator);
  const nanos = sign === '-' ? -magnitude : magnitude;
  // Kubernetes prints a binary quantity with a magnitude below 1 in decimal (e.g. "0.5Ki"
  // is 512, but "0.0001Ki" is "102400u"), and "0" is always DecimalSI.
  const belowOne = magnitude < NANOS_PER_UNIT;
  const format: QuantityFormat = nanos === 0n || (suffix.format === 'BinarySI' && belowOne) ? 'DecimalSI' : suffix.format;
  return { ok: true, quantity: { nanos, format } };
}

/** Parses or throws; for literals in code and tests, never for outside data. */
export function quantity(text: string): bigint {
  const parsed = parseQuantity(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.quantity.nanos;
}

const decimalSuffixByExponent: ReadonlyMap<number, string> = new Map(
  Object.entries(decimalSuffixes).map(([suffix, exponent]) => [exponent, suffix]),
);
const binarySuffixByPower = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;

function formatDecimal(nanos: bigint, format: 'DecimalSI' | 'DecimalExponent'): string {
  const negative = nanos < 0n;
  let mantissa = negative ? -nanos : nanos;
  // Move every factor of ten into the exponent, then step back down to a multiple of
  // three (AsCanonicalBytes in apimachinery amount.go).
  let exponent = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent += 1;
  }
  while (((exponent % 3) + 3) % 3 !== 0) {
    mantissa *= 10n;
    exponent -= 1;
  }
  let suffix: string;
  if (format === 'DecimalExponent') {
    suffix = exponent === 0 ? '' : `e${exponent}`;
  } else {
    // Kubernetes has no SI suffix above E (10^18); it would drop the exponent. We keep
    // the value right by folding the surplus into the mantissa.
    while (exponent > 18) {
      mantissa *= 1000n;
      exponent -= 3;
    }
    suffix = decimalSuffixByExponent.get(exponent) ?? '';
  }
  return `${negative ? '-' : ''}${mantissa}${suffix}`;
}

function formatBinary(bytes: bigint): string {
  const negative = bytes < 0n;
  let amount = negative ? -bytes : bytes;
  let power = 0;
  while (power < binarySuffixByPower.length - 1 && amount % 1024n === 0n) {
    amount /= 1024n;
    power += 1;
  }
  return `${negative ? '-' : ''}${amount}${binarySuffixByPower[power] ?? ''}`;
}

/**
 * Canonical Kubernetes string of a quantity (Quantity.String / CanonicalizeBytes):
 * "1536Mi" for 1.5Gi, "1500m" for 1.5, "1k" for 1000, "1e3" stays "1e3".
 */
export function formatQuantity(nanos: bigint, format: QuantityFormat = 'DecimalSI'): string {
  if (nanos === 0n) return '0';
  if (format === 'BinarySI') {
    const whole = nanos % NANOS_PER_UNIT === 0n;
    const bytes = nanos / NANOS_PER_UNIT;
    // Below 1Ki, or not a whole number of bytes, Kubernetes switches to decimal so
    // nothing is rounded.
    if (whole && (bytes >= 1024n || bytes <= -1024n)) return formatBinary(bytes);
    return formatDecimal(nanos, 'DecimalSI');
  }
  return formatDecimal(nanos, format);
}

/** Parse then print canonically, as the API server does on a round trip. */
export function canonicalQuantity(text: string): { readonly ok: true; readonly canonical: string } | { readonly ok: false; readonly reason: string } {
  const parsed = parseQuantity(text);
  if (!parsed.ok) return parsed;
  return { ok: true, canonical: formatQuantity(parsed.quantity.nanos, parsed.quantity.format) };
}

function roundAwayFromZero(nanos: bigint, unit: bigint): bigint {
  return nanos >= 0n ? divideRoundingUp(nanos, unit) : -divideRoundingUp(-nanos, unit);
}

/** Quantity.Value(): whole units, rounded away from zero as Kubernetes does. */
export function toUnits(nanos: bigint): bigint {
  return roundAwayFromZero(nanos, NANOS_PER_UNIT);
}

/** Quantity.MilliValue(): milli-units, rounded away from zero. */
export function toMilliUnits(nanos: bigint): bigint {
  return roundAwayFromZero(nanos, 1_000_000n);
}

export function fromUnits(units: bigint | number): bigint {
  return BigInt(units) * NANOS_PER_UNIT;
}

export function fromMilliUnits(milli: bigint | number): bigint {
  return BigInt(milli) * 1_000_000n;
}

export const MEBIBYTE = 1024n * 1024n;
export const GIBIBYTE = 1024n * MEBIBYTE;

export function fromMebibytes(mebibytes: bigint | number): bigint {
  return fromUnits(BigInt(mebibytes) * MEBIBYTE);
}
