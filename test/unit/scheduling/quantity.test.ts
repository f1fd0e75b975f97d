import {
  canonicalQuantity, formatQuantity, parseQuantity, quantity, toMilliUnits, toUnits,
} from '../../../core/scheduling/quantity';

describe('Kubernetes quantities', () => {
  // Expected strings follow apimachinery's CanonicalizeBytes: the suffix family written
  // is kept; factors of ten (or 1024) move into the largest suffix that keeps an integer.
  it.each([
    ['100m', '100m'],
    ['1930m', '1930m'],
    ['2', '2'],
    ['2k', '2k'],
    ['1000', '1k'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['1.5', '1500m'],
    ['0.5', '500m'],
    ['.5', '500m'],
    ['5.', '5'],
    ['0.1', '100m'],
    ['1024', '1024'],
    ['1e3', '1e3'],
    ['1E3', '1e3'],
    ['1.5e3', '1500'],
    ['12e6', '12e6'],
    ['1e-3', '1e-3'],
    ['1Ki', '1Ki'],
    ['1024Ki', '1Mi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Mi', '512Ki'],
    ['100Mi', '100Mi'],
    ['6903Mi', '6903Mi'],
    ['1.1Mi', '1153433600m'],
    ['0.5Ki', '512'],
    ['1u', '1u'],
    ['1n', '1n'],
    ['0.0000000001', '1n'],
    ['-1', '-1'],
    ['-100m', '-100m'],
    ['+2', '2'],
    ['0', '0'],
    ['0Gi', '0'],
    ['007', '7'],
    ['1G', '1G'],
    ['1000M', '1G'],
    ['1Ei', '1Ei'],
  ])('%s is %s', (input, canonical) => {
    expect(canonicalQuantity(input)).toEqual({ ok: true, canonical });
  });

  it.each([
    '', ' 1', '1 ', '1.1.M', '1+1.0M', '0.1mi', '0.1am', 'aoeu', '.5i', '1i', '-3.01i', '-3.01e-', '1e', 'Ki', '-', '.',
  ])('rejects %j with a reason naming the input', (input) => {
    const parsed = parseQuantity(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain(`"${input}"`);
  });

  it('holds exact values where floating point would not', () => {
    // 0.1 + 0.2 cpu is exactly 300m, and 24 TiB in nano-bytes is far above 2^53.
    expect(formatQuantity(quantity('0.1') + quantity('0.2'))).toBe('300m');
    expect(formatQuantity(quantity('24Ti') + quantity('1'), 'BinarySI')).toBe('26388279066625');
  });

  it('rounds sub-nano precision up, as the API server does', () => {
    expect(quantity('1.0000000001')).toBe(1_000_000_001n);
    expect(quantity('-1.0000000001')).toBe(-1_000_000_001n);
  });

  it.each([
    ['100m', 1n, 100n],
    ['1.5', 2n, 1500n],
    ['1n', 1n, 1n],
    ['2Ki', 2048n, 2_048_000n],
  ])('%s is %i units and %i milli-units, rounded up', (input, units, milli) => {
    expect(toUnits(quantity(input))).toBe(units);
    expect(toMilliUnits(quantity(input))).toBe(milli);
  });

  it('prints bytes below 1Ki or with a fraction in decimal', () => {
    expect(formatQuantity(quantity('512'), 'BinarySI')).toBe('512');
    expect(formatQuantity(quantity('1536'), 'BinarySI')).toBe('1536');
    expect(formatQuantity(quantity('2048'), 'BinarySI')).toBe('2Ki');
    expect(formatQuantity(quantity('100m'), 'BinarySI')).toBe('100m');
  });
});
