import {
  describeRequirement, intersect, isUnsatisfiable, matches, nodeSelectorOperators, parseRequirement,
  toNodeSelectorRequirements, type NodeSelectorOperator, type NodeSelectorRequirementInput, type Requirement,
} from '../../../core/scheduling/requirement';

const key = 'example.com/size';

// One representative requirement per operator, over values chosen so that every pair
// overlaps in an interesting way: integers on both sides of the bounds and a non-integer.
const byOperator: Record<NodeSelectorOperator, NodeSelectorRequirementInput> = {
  In: { key, operator: 'In', values: ['1', '5', 'x'] },
  NotIn: { key, operator: 'NotIn', values: ['5', '9'] },
  Exists: { key, operator: 'Exists' },
  DoesNotExist: { key, operator: 'DoesNotExist' },
  Gt: { key, operator: 'Gt', values: ['3'] },
  Lt: { key, operator: 'Lt', values: ['7'] },
  Gte: { key, operator: 'Gte', values: ['5'] },
  Lte: { key, operator: 'Lte', values: ['5'] },
};

function aRequirement(input: NodeSelectorRequirementInput): Requirement {
  const parsed = parseRequirement(input);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.requirement;
}

const nothing = `${key} In [] (matches nothing)`;

// Hand-derived: the set each operator denotes, intersected (reference in requirement.ts).
const expectedIntersections: ReadonlyArray<[NodeSelectorOperator, NodeSelectorOperator, string]> = [
  ['In', 'In', `${key} In [1, 5, x]`],
  ['In', 'NotIn', `${key} In [1, x]`],
  ['In', 'Exists', `${key} In [1, 5, x]`],
  ['In', 'DoesNotExist', nothing],
  ['In', 'Gt', `${key} In [5]`],
  ['In', 'Lt', `${key} In [1, 5]`],
  ['In', 'Gte', `${key} In [5]`],
  ['In', 'Lte', `${key} In [1, 5]`],
  ['NotIn', 'NotIn', `${key} NotIn [5, 9]`],
  ['NotIn', 'Exists', `${key} Exists, NotIn [5, 9]`],
  ['NotIn', 'DoesNotExist', `${key} DoesNotExist`],
  ['NotIn', 'Gt', `${key} Gt 3, NotIn [5, 9]`],
  ['NotIn', 'Lt', `${key} Lt 7, NotIn [5]`],
  ['NotIn', 'Gte', `${key} Gt 4, NotIn [5, 9]`],
  ['NotIn', 'Lte', `${key} Lt 6, NotIn [5]`],
  ['Exists', 'Exists', `${key} Exists`],
  ['Exists', 'DoesNotExist', nothing],
  ['Exists', 'Gt', `${key} Gt 3`],
  ['Exists', 'Lt', `${key} Lt 7`],
  ['Exists', 'Gte', `${key} Gt 4`],
  ['Exists', 'Lte', `${key} Lt 6`],
  ['DoesNotExist', 'DoesNotExist', `${key} DoesNotExist`],
  ['DoesNotExist', 'Gt', nothing],
  ['DoesNotExist', 'Lt', nothing],
  ['DoesNotExist', 'Gte', nothing],
  ['DoesNotExist', 'Lte', nothing],
  ['Gt', 'Gt', `${key} Gt 3`],
  ['Gt', 'Lt', `${key} Gt 3, Lt 7`],
  ['Gt', 'Gte', `${key} Gt 4`],
  ['Gt', 'Lte', `${key} Gt 3, Lt 6`],
  ['Lt', 'Lt', `${key} Lt 7`],
  ['Lt', 'Gte', `${key} Gt 4, Lt 7`],
  ['Lt', 'Lte', `${key} Lt 6`],
  ['Gte', 'Gte', `${key} Gt 4`],
  ['Gte', 'Lte', `${key} Gt 4, Lt 6`],
  ['Lte', 'Lte', `${key} Lt 6`],
];

// Both orders of every pair: 64 cases, all operators.
const everyOrderedPair = expectedIntersections.flatMap(([a, b, expected]) =>
  a === b ? [[a, b, expected] as const] : [[a, b, expected] as const, [b, a, expected] as const]);

// Label states to probe set semantics with: absent, integers around every bound,
// a zero-padded integer (Kubernetes parses "05" as 5) and a non-integer.
const labelStates: ReadonlyArray<string | undefined> = [undefined, '1', '3', '4', '5', '05', '6', '7', '9', 'x', ''];

describe('requirement algebra', () => {
  it('covers every ordered pair of operators', () => {
    expect(everyOrderedPair).toHaveLength(nodeSelectorOperators.length ** 2);
  });

  it.each(everyOrderedPair)('%s ∩ %s is %s', (a, b, expected) => {
    const result = intersect(aRequirement(byOperator[a]), aRequirement(byOperator[b]));
    expect(describeRequirement(result)).toBe(expected);
    expect(isUnsatisfiable(result)).toBe(expected === nothing);
  });

  it.each(everyOrderedPair)('%s ∩ %s admits exactly the label states both admit', (a, b) => {
    const left = aRequirement(byOperator[a]);
    const right = aRequirement(byOperator[b]);
    const result = intersect(left, right);
    for (const state of labelStates) {
      expect([state, matches(result, state)]).toEqual([state, matches(left, state) && matches(right, state)]);
    }
  });

  it.each([
    ['In', '5', true], ['In', undefined, false], ['In', '6', false],
    ['NotIn', undefined, true], ['NotIn', '5', false], ['NotIn', '6', true],
    ['Exists', 'anything', true], ['Exists', undefined, false],
    ['DoesNotExist', undefined, true], ['DoesNotExist', '1', false],
    ['Gt', '4', true], ['Gt', '3', false], ['Gt', 'x', false], ['Gt', undefined, false], ['Gt', '04', true],
    ['Lt', '6', true], ['Lt', '7', false], ['Lt', '-100', true],
    ['Gte', '5', true], ['Gte', '4', false],
    ['Lte', '5', true], ['Lte', '6', false],
  ] as const)('%s matches label %j: %s', (operator, value, expected) => {
    expect(matches(aRequirement(byOperator[operator]), value)).toBe(expected);
  });

  it('canonicalises on construction: sorted, deduplicated values', () => {
    expect(aRequirement({ key, operator: 'In', values: ['b', 'a', 'b'] })).toEqual({ kind: 'In', key, values: ['a', 'b'] });
    expect(aRequirement({ key, operator: 'Gte', values: ['5'] })).toEqual(aRequirement({ key, operator: 'Gt', values: ['4'] }));
    expect(aRequirement({ key, operator: 'Lte', values: ['5'] })).toEqual(aRequirement({ key, operator: 'Lt', values: ['6'] }));
  });

  it('turns bounds with no integer between them into the empty set', () => {
    const result = intersect(aRequirement({ key, operator: 'Gt', values: ['3'] }), aRequirement({ key, operator: 'Lt', values: ['4'] }));
    expect(isUnsatisfiable(result)).toBe(true);
  });

  it('keeps the larger minValues', () => {
    const result = intersect(
      aRequirement({ key, operator: 'In', values: ['a', 'b', 'c'], minValues: 2 }),
      aRequirement({ key, operator: 'Exists', minValues: 3 }),
    );
    expect(result).toEqual({ kind: 'In', key, values: ['a', 'b', 'c'], minValues: 3 });
  });

  it.each([
    [{ key, operator: 'Equals', values: ['a'] }, 'unknown operator "Equals"'],
    [{ key, operator: 'In', values: [] }, `${key} In needs at least one value`],
    [{ key, operator: 'NotIn' }, `${key} NotIn needs at least one value`],
    [{ key, operator: 'Exists', values: ['a'] }, `${key} Exists takes no values`],
    [{ key, operator: 'Gt', values: ['1.5'] }, `${key} Gt needs an integer value, got "1.5"`],
    [{ key, operator: 'Lt', values: ['1', '2'] }, `${key} Lt needs exactly one integer value`],
    [{ key, operator: 'In', values: ['a'], minValues: 2 }, 'has 1 values but minValues 2'],
    [{ key, operator: 'Exists', minValues: 0 }, 'minValues 0; it must be a positive integer'],
  ])('rejects %j, saying why', (input, reason) => {
    expect(parseRequirement(input)).toEqual({ ok: false, reason: expect.stringContaining(reason) });
  });

  it('writes requirements back as NodeSelectorRequirements that mean the same', () => {
    const result = intersect(aRequirement(byOperator.NotIn), aRequirement(byOperator.Gt));
    expect(toNodeSelectorRequirements(result)).toEqual([
      { key, operator: 'Gt', values: ['3'] },
      { key, operator: 'NotIn', values: ['5', '9'] },
    ]);
    expect(toNodeSelectorRequirements(intersect(aRequirement(byOperator.NotIn), aRequirement(byOperator.Exists)))).toEqual([
      { key, operator: 'Exists' },
      { key, operator: 'NotIn', values: ['5', '9'] },
    ]);
  });
});
