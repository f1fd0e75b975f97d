import { type Condition } from '../../../core/api';
import { INVALID_NODE_CLASS_REASON, nodeClassValidationConditions } from '../../../core/provisioning';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';
const cond = (type: string, status: Condition['status'], reason = type, message = ''): Condition => ({ type, status, reason, message, lastTransitionTime: T0 });
/** What resolution (activities/cloud/node-class.ts) writes for a class that resolved. */
const resolved = (): Condition[] => [
  cond('AMIsReady', 'True', 'AMIsFound'),
  cond('Ready', 'True', 'Ready'),
  cond('SecurityGroupsReady', 'True', 'SecurityGroupsFound'),
  cond('SubnetsReady', 'True', 'SubnetsFound'),
  cond('ValidationSucceeded', 'True', 'Valid'),
];
const PROBLEM = 'spec.kubelet.evictionHard["memory.available"]: is neither a percentage nor a quantity (got "lots"). Fix: write e.g. "10%" or "100Mi"';
const byType = (conditions: Condition[] | undefined, type: string) => conditions?.find((c) => c.type === type);

describe('EC2NodeClass validation conditions', () => {
  it('marks an invalid class ValidationSucceeded=False and Ready=False, naming the field and the fix', () => {
    const next = nodeClassValidationConditions([], PROBLEM, T1);
    expect(byType(next, 'ValidationSucceeded')).toEqual({ type: 'ValidationSucceeded', status: 'False', reason: INVALID_NODE_CLASS_REASON, message: PROBLEM, lastTransitionTime: T1 });
    expect(byType(next, 'Ready')).toEqual(expect.objectContaining({ status: 'False', reason: 'NotReady', message: `ValidationSucceeded: ${PROBLEM}` }));
  });

  it("keeps resolution's conditions when it marks a resolved class invalid", () => {
    const next = nodeClassValidationConditions(resolved(), PROBLEM, T1);
    expect(next?.map((c) => c.type)).toEqual(['AMIsReady', 'Ready', 'SecurityGroupsReady', 'SubnetsReady', 'ValidationSucceeded']);
    for (const type of ['AMIsReady', 'SecurityGroupsReady', 'SubnetsReady']) expect(byType(next, type)).toEqual(byType(resolved(), type));
    expect(byType(next, 'Ready')).toEqual(expect.objectContaining({ status: 'False', lastTransitionTime: T1 }));
  });

  it("lists resolution's failures in Ready's message too", () => {
    const next = nodeClassValidationConditions([cond('SubnetsReady', 'False', 'SubnetsNotFound', 'no subnet matches tags {a: b}')], PROBLEM, T1);
    expect(byType(next, 'Ready')?.message).toBe(`SubnetsReady: no subnet matches tags {a: b}; ValidationSucceeded: ${PROBLEM}`);
  });

  it('writes nothing when an invalid class already says so', () => {
    const first = nodeClassValidationConditions(resolved(), PROBLEM, T0);
    expect(first).toBeDefined();
    expect(nodeClassValidationConditions(first ?? [], PROBLEM, T1)).toBeUndefined();
    // a different problem is a change (the message moves, lastTransitionTime does not)
    const other = nodeClassValidationConditions(first ?? [], 'spec.tags: x', T1);
    expect(byType(other, 'ValidationSucceeded')).toEqual(expect.objectContaining({ message: 'spec.tags: x', lastTransitionTime: T0 }));
  });

  it.each([
    ['resolution had resolved it: Ready again', resolved(), 'True', 'Ready'],
    ['never resolved: Ready waits for a launch', [] as Condition[], 'Unknown', 'AwaitingResolution'],
    ['a selector matches nothing: still not Ready', [cond('SubnetsReady', 'False', 'SubnetsNotFound', 'none')], 'False', 'NotReady'],
  ] as const)('undoes its own mark once the class is fixed — %s', (_name, before, ready, reason) => {
    const invalid = nodeClassValidationConditions([...before], PROBLEM, T0) ?? [];
    const fixed = nodeClassValidationConditions(invalid, undefined, T1);
    expect(byType(fixed, 'ValidationSucceeded')).toEqual(expect.objectContaining({ status: 'True', reason: 'Valid', message: '', lastTransitionTime: T1 }));
    expect(byType(fixed, 'Ready')).toEqual(expect.objectContaining({ status: ready, reason }));
  });

  it.each([
    ['no conditions at all', [] as Condition[]],
    ['resolved and valid', resolved()],
    ["resolution's own validation failure (an unsupported AMI family)", [cond('ValidationSucceeded', 'False', 'UnsupportedAMIFamily', 'amiFamily AL2 is not supported'), cond('Ready', 'False', 'NotReady', 'ValidationSucceeded: amiFamily AL2 is not supported')]],
  ] as const)("leaves a valid class alone: %s", (_name, before) => {
    expect(nodeClassValidationConditions([...before], undefined, T1)).toBeUndefined();
  });
});
