import { type Condition } from '../../../core/api';
import { setCondition, withReadyCondition } from '../../../core/lifecycle';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';
const cond = (type: string, status: Condition['status'], reason = type): Condition => ({ type, status, reason, message: '', lastTransitionTime: T0 });

describe('NodeClaim conditions', () => {
  it('moves lastTransitionTime only when the status changes', () => {
    const first = setCondition([], { type: 'Launched', status: 'Unknown', reason: 'Launching' }, T0);
    const same = setCondition(first, { type: 'Launched', status: 'Unknown', reason: 'StillLaunching', message: 'x' }, T1);
    expect(same[0]).toEqual(expect.objectContaining({ reason: 'StillLaunching', message: 'x', lastTransitionTime: T0 }));
    const changed = setCondition(same, { type: 'Launched', status: 'True', reason: 'Launched' }, T1);
    expect(changed[0]?.lastTransitionTime).toBe(T1);
  });

  it('keeps conditions sorted by type, one per type', () => {
    const list = setCondition([cond('Registered', 'True'), cond('Launched', 'True')], { type: 'Drained', status: 'False', reason: 'Draining' }, T1);
    expect(list.map((c) => c.type)).toEqual(['Drained', 'Launched', 'Registered']);
  });

  it.each([
    ['all dependents True', [cond('Launched', 'True'), cond('Registered', 'True'), cond('Initialized', 'True')], 'True', 'Ready'],
    ['one missing', [cond('Launched', 'True'), cond('Registered', 'True')], 'Unknown', 'AwaitingReconciliation'],
    ['one Unknown', [cond('Launched', 'True'), cond('Registered', 'True'), cond('Initialized', 'Unknown')], 'Unknown', 'AwaitingReconciliation'],
    ['one False', [cond('Launched', 'False', 'InsufficientCapacity'), cond('Registered', 'True')], 'False', 'LaunchedInsufficientCapacity'],
  ] as const)('Ready is derived from Launched, Registered, Initialized: %s', (_name, conditions, status, reason) => {
    const ready = withReadyCondition([...conditions], T1).find((c) => c.type === 'Ready');
    expect(ready).toEqual(expect.objectContaining({ status, reason }));
  });

  it('says what Ready is waiting for', () => {
    const ready = withReadyCondition([cond('Launched', 'True')], T1).find((c) => c.type === 'Ready');
    expect(ready?.message).toBe('waiting for Registered, Initialized');
  });
});
