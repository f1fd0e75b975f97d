// Each timer and ending of the NodeClaim lifecycle in isolation, on Temporal's time-skipping
// test server: minutes and days of workflow time in seconds of test time.
import { ApplicationFailure } from '@temporalio/common';
import { DAY, HOUR, MINUTE, instance, named, startTimeSkipping, type TimeSkippingHarness } from './support';

jest.setTimeout(120_000);

let h: TimeSkippingHarness;
beforeAll(async () => {
  h = await startTimeSkipping();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const slow = { resync: '10m', steadyResync: '30m' };

describe('NodeClaim lifecycle timers (time-skipping)', () => {
  it('launch timeout: a class that never becomes ready ends the claim after 5 minutes, nothing to terminate', async () => {
    let start: number | undefined;
    const { result, calls } = await h.run({
      launch: (now) => {
        start ??= now;
        throw ApplicationFailure.retryable('EC2NodeClass default is not ready', 'NodeClassNotReady');
      },
    });
    expect(result.end).toEqual({ kind: 'launchTimeout' });
    const last = named(calls, 'launchClaimInstance').at(-1)?.at ?? 0;
    expect(last - (start ?? 0)).toBeLessThanOrEqual(5 * MINUTE);
    expect(named(calls, 'terminateClaimInstance')).toHaveLength(0);
    expect(named(calls, 'finalizeClaim')).toEqual([expect.objectContaining({ input: expect.objectContaining({ warning: true }) })]);
  });

  it('registration timeout: no Node within 15 minutes terminates the instance without a drain', async () => {
    const { result, calls } = await h.run({ registeredAt: Number.MAX_SAFE_INTEGER }, { timeouts: { resync: '1m' } });
    expect(result.end).toEqual({ kind: 'registrationTimeout' });
    const launchedAt = named(calls, 'launchClaimInstance')[0]?.at ?? 0;
    const terminatedAt = named(calls, 'terminateClaimInstance')[0]?.at ?? 0;
    expect(terminatedAt - launchedAt).toBeGreaterThanOrEqual(15 * MINUTE);
    expect(terminatedAt - launchedAt).toBeLessThan(17 * MINUTE);
    expect(named(calls, 'startDrain')).toHaveLength(0);
    expect(named(calls, 'terminateClaimInstance')).toEqual([expect.objectContaining({ input: expect.objectContaining({ providerId: instance.providerId }) })]);
  });

  it('initialization give-up: a Node not Ready for 30 minutes is replaced, forcefully', async () => {
    const { result, calls } = await h.run({ node: () => ({ exists: true, ready: 'False' }) }, { timeouts: { resync: '1m' } });
    expect(result.end).toEqual(expect.objectContaining({ kind: 'notReady', status: 'False' }));
    const registeredAt = named(calls, 'reviewInitialization')[0]?.at ?? 0;
    const drainAt = named(calls, 'startDrain')[0]?.at ?? 0;
    expect(drainAt - registeredAt).toBeGreaterThanOrEqual(30 * MINUTE);
    expect(drainAt - registeredAt).toBeLessThan(32 * MINUTE);
    // forceful: the very first eviction pass is already past the deadline
    expect(named(calls, 'drainPods')[0]?.input).toEqual(expect.objectContaining({ pastDeadline: true }));
    expect(named(calls, 'terminateClaimInstance')).toHaveLength(1);
  });

  it('expireAfter counts from the claim\'s creation, not from the workflow\'s start', async () => {
    let created: number | undefined;
    const { result, calls } = await h.run({
      claim: (now) => {
        created ??= now - 30 * MINUTE; // the claim existed half an hour before its workflow ran
        return { exists: true, deleting: false, createdAt: created, expireAfterMs: 2 * HOUR };
      },
    }, { timeouts: slow });
    expect(result.end).toEqual({ kind: 'expired' });
    const drainAt = named(calls, 'startDrain')[0]?.at ?? 0;
    expect(drainAt - (created ?? 0)).toBeGreaterThanOrEqual(2 * HOUR);
    expect(drainAt - (created ?? 0)).toBeLessThan(2 * HOUR + MINUTE);
  });

  it('terminationGracePeriod: a PDB holds the drain until the grace period ends, then the drain is forced', async () => {
    const { result, calls } = await h.run(
      {
        claim: (now) => ({ exists: true, deleting: now > 0 && deleteAfter(now), terminationGraceMs: 10 * MINUTE }),
        drain: (_now, pastDeadline) => (pastDeadline ? { done: true } : { done: false, blockers: 'eviction refused by a PodDisruptionBudget: default/web' }),
      },
      { timeouts: slow },
    );
    expect(result.end).toEqual({ kind: 'deleted', by: 'nodeclaim' });
    const drains = named(calls, 'drainPods');
    const firstForced = drains.find((c) => (c.input as { pastDeadline: boolean }).pastDeadline);
    expect(drains.filter((c) => !(c.input as { pastDeadline: boolean }).pastDeadline).length).toBeGreaterThan(3);
    // the grace period runs from when the workflow decided to drain: on the result of the call
    // before startDrain (startDrain itself is scheduled when that decision's task completes,
    // a few ms of server time later)
    const drainStart = calls.findIndex((c) => c === named(calls, 'startDrain')[0]);
    const began = calls[drainStart - 1]?.at ?? 0;
    expect((firstForced?.at ?? 0) - began).toBeGreaterThanOrEqual(10 * MINUTE);
    expect((firstForced?.at ?? 0) - began).toBeLessThan(11 * MINUTE);
  });
});

// deleted one hour after the first observation
let firstSeen: number | undefined;
function deleteAfter(now: number): boolean {
  firstSeen ??= now;
  return now - firstSeen >= HOUR;
}

describe('runs of the first lifecycle shape', () => {
  it('a v1 run continuing as new from steady state carries on in the v2 shape, without a second launch', async () => {
    // what workflows/legacy/nodeclaim-v1.ts hands to continue-as-new from its steady state
    const v1State = { phase: 'Initialized', instance, nodeName: 'ip-10-0-0-7.ec2.internal', nodePool: 'default', timings: { Initialized: '2026-01-01T00:00:00Z' } };
    const { result, calls } = await h.run({ claim: (now) => ({ exists: true, deleting: deleteAfter3(now) }) }, { timeouts: slow }, v1State);
    expect(result.end).toEqual({ kind: 'deleted', by: 'nodeclaim' });
    expect(named(calls, 'launchClaimInstance')).toHaveLength(0);
    expect(named(calls, 'prepareClaim')).toHaveLength(0);
    expect(named(calls, 'terminateClaimInstance')).toEqual([expect.objectContaining({ input: expect.objectContaining({ providerId: instance.providerId }) })]);
  });
});

let firstSeen3: number | undefined;
function deleteAfter3(now: number): boolean {
  firstSeen3 ??= now;
  return now - firstSeen3 >= HOUR;
}

describe('every wait is bounded in history (days of workflow time)', () => {
  const maxHistoryEvents = 200;
  // one wait round adds at most this many events after the check that continues as new
  const slack = 40;

  it('a Ready node held by a startup taint for three days: bounded history, then a clean end on deletion', async () => {
    let start: number | undefined;
    const gone = (now: number) => {
      start ??= now;
      return now - start >= 3 * DAY;
    };
    const { result, calls, historyLengths } = await h.run(
      {
        claim: (now) => ({ exists: true, deleting: gone(now) }),
        node: () => ({ exists: true, ready: 'True', blocker: 'startup taint example.com/agent still present' }),
      },
      { timeouts: slow, maxHistoryEvents },
    );
    expect(result.end).toEqual({ kind: 'deleted', by: 'nodeclaim' });
    expect(historyLengths.length).toBeGreaterThan(3);
    expect(Math.max(...historyLengths)).toBeLessThanOrEqual(maxHistoryEvents + slack);
    expect(named(calls, 'reviewInitialization').length).toBeGreaterThan(3 * 24 * 5);
    // the life still ends cleanly: drained, terminated and finalized exactly once
    expect(named(calls, 'terminateClaimInstance')).toHaveLength(1);
    expect(named(calls, 'finalizeClaim')).toHaveLength(1);
    console.log(`startup-taint hold, 3 days: ${historyLengths.length} runs, history lengths max ${Math.max(...historyLengths)}, total ${historyLengths.reduce((a, b) => a + b, 0)} events`);
  }, 300_000);

  it('a drain held by a PDB for three days with no terminationGracePeriod: bounded history, then terminated', async () => {
    let drainStart: number | undefined;
    const { result, calls, historyLengths } = await h.run(
      {
        claim: (now) => ({ exists: true, deleting: deleteAfter2(now) }),
        drain: (now) => {
          drainStart ??= now;
          return now - drainStart >= 3 * DAY ? { done: true } : { done: false, blockers: 'eviction refused by a PodDisruptionBudget: default/db' };
        },
      },
      { timeouts: slow, maxHistoryEvents },
    );
    expect(result.end).toEqual({ kind: 'deleted', by: 'nodeclaim' });
    expect(historyLengths.length).toBeGreaterThan(3);
    expect(Math.max(...historyLengths)).toBeLessThanOrEqual(maxHistoryEvents + slack);
    const drains = named(calls, 'drainPods');
    expect(drains.every((c) => !(c.input as { pastDeadline: boolean }).pastDeadline)).toBe(true);
    expect((drains.at(-1)?.at ?? 0) - (drains[0]?.at ?? 0)).toBeGreaterThanOrEqual(3 * DAY);
    expect(named(calls, 'terminateClaimInstance')).toHaveLength(1);
    expect(named(calls, 'finalizeClaim')).toHaveLength(1);
    console.log(`PDB-held drain, 3 days: ${historyLengths.length} runs, history lengths max ${Math.max(...historyLengths)}, total ${historyLengths.reduce((a, b) => a + b, 0)} events`);
  }, 300_000);
});

let firstSeen2: number | undefined;
function deleteAfter2(now: number): boolean {
  firstSeen2 ??= now;
  return now - firstSeen2 >= HOUR;
}
