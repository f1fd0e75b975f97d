import {
  addHistograms, claimStepSeconds, claimTimeline, duplicateInstances, histogramQuantile, leakedInstances, parseHistogram, pdbShortfalls, pdbViolations, scaleBounds, pendingPods, pendingToRunningSeconds, percentile, perMinute, rssMiBFromStatus,
  phaseTimeout, retriedWhileProgressing, stuckWorkflows, sumCounter, type ObservedInstance, type PdbSample, type WorkflowSample,
} from '../../bench/scale-checks';

const anInstance = (id: string, o: { claim?: string; cluster?: string; state?: string } = {}): ObservedInstance => ({
  id,
  state: o.state ?? 'running',
  tags: { ...(o.claim ? { 'karpenter.sh/nodeclaim': o.claim } : {}), [`kubernetes.io/cluster/${o.cluster ?? 'c1'}`]: 'owned' },
});

describe('duplicate instances', () => {
  it('finds a claim with two live instances, and not one whose second instance is terminated', () => {
    const dupes = duplicateInstances([
      anInstance('i-1', { claim: 'a' }),
      anInstance('i-2', { claim: 'a' }),
      anInstance('i-3', { claim: 'b' }),
      anInstance('i-4', { claim: 'b', state: 'terminated' }),
      anInstance('i-5', { claim: 'c', state: 'shutting-down' }),
      anInstance('i-6', { claim: 'c' }),
    ]);
    expect(dupes).toEqual([{ nodeClaim: 'c1/a', instanceIds: ['i-1', 'i-2'] }]);
  });

  it('does not take two clusters’ claims of the same name for one', () => {
    expect(duplicateInstances([anInstance('i-1', { claim: 'a', cluster: 'x' }), anInstance('i-2', { claim: 'a', cluster: 'y' })])).toEqual([]);
  });
});

describe('leaked instances', () => {
  it('counts live instances of the run’s clusters only', () => {
    const leaked = leakedInstances(
      [anInstance('i-1', { cluster: 'x' }), anInstance('i-2', { cluster: 'x', state: 'terminated' }), anInstance('i-3', { cluster: 'other' }), anInstance('i-4', { cluster: 'y', state: 'pending' })],
      ['x', 'y'],
    );
    expect(leaked.map((i) => i.id)).toEqual(['i-1', 'i-4']);
  });
});

describe('pods', () => {
  const pods = [
    { name: 'a', phase: 'Running', deleting: false, createdAt: '2026-01-01T00:00:00Z', readyAt: '2026-01-01T00:00:30Z' },
    { name: 'b', phase: 'Pending', deleting: false, createdAt: '2026-01-01T00:00:00Z' },
    { name: 'c', phase: 'Pending', deleting: true, createdAt: '2026-01-01T00:00:00Z' },
    { name: 'd', phase: 'Running', deleting: false, createdAt: '2026-01-01T00:01:00Z', readyAt: '2026-01-01T00:01:10Z' },
  ];
  it('lists pending pods that are not being deleted', () => {
    expect(pendingPods(pods)).toEqual(['b']);
  });
  it('measures creation to Ready for running pods, optionally only those created since a time', () => {
    expect(pendingToRunningSeconds(pods)).toEqual([30, 10]);
    expect(pendingToRunningSeconds(pods, Date.parse('2026-01-01T00:00:30Z'))).toEqual([10]);
  });
});

describe('percentile and rates', () => {
  it.each([
    [50, 5],
    [99, 10],
    [100, 10],
    [10, 1],
  ])('p%p of 1..10 is %p (nearest rank)', (p, expected) => {
    expect(percentile([10, 9, 8, 7, 6, 5, 4, 3, 2, 1], p)).toBe(expected);
  });
  it('has no percentile of nothing and refuses p = 0', () => {
    expect(percentile([], 50)).toBeUndefined();
    expect(() => percentile([1], 0)).toThrow(/p must be/);
  });
  it('counts claims per minute between the first and the last', () => {
    expect(perMinute([0, 30_000, 60_000, 120_000])).toBe(1.5);
    expect(perMinute([5])).toBeUndefined();
  });
});

describe('stuck workflows', () => {
  const now = 1_000_000;
  const idle = (id: string, at: number, historyLength: number): WorkflowSample => ({ id, at, historyLength, pendingActivitiesLastProgress: [] });
  const running = (...ids: string[]) => ({ runningNow: new Set(ids) });
  it('a workflow parked on a timer for ten minutes is not stuck', () => {
    expect(stuckWorkflows([idle('w', now - 600_000, 12), idle('w', now, 12)], now, running('w'))).toEqual([]);
  });
  it('a workflow task pending for five minutes is', () => {
    expect(stuckWorkflows([{ ...idle('w', now, 12), pendingWorkflowTaskSince: now - 300_000 }], now, running('w'))).toEqual([{ id: 'w', why: 'a workflow task pending for 300 s' }]);
  });
  it('an activity with no start, retry or heartbeat for five minutes is; one that heartbeat a minute ago is not', () => {
    expect(stuckWorkflows([{ ...idle('a', now, 5), pendingActivitiesLastProgress: [now - 310_000] }], now, running('a')).map((s) => s.id)).toEqual(['a']);
    expect(stuckWorkflows([{ ...idle('b', now, 5), pendingActivitiesLastProgress: [now - 60_000] }], now, running('b'))).toEqual([]);
  });
  it('a workflow that ended since its last sample is not stuck, whatever that sample said', () => {
    // the first chaos runs counted these: their last sample, minutes old, had an activity pending
    const lastSeen: WorkflowSample = { ...idle('gone', now - 400_000, 5), pendingActivitiesLastProgress: [now - 410_000] };
    expect(stuckWorkflows([lastSeen], now, running('other'))).toEqual([]);
    expect(stuckWorkflows([lastSeen], now, running('gone')).map((s) => s.id)).toEqual(['gone']);
  });
  it('an activity retried for five minutes without an attempt completing is, though each retry and signal looks like progress', () => {
    const planning = (at: number, attempt: number, historyLength: number): WorkflowSample => ({
      ...idle('p', at, historyLength),
      pendingActivitiesLastProgress: [at - 5_000],
      pendingActivities: [{ id: '6', type: 'planBatch', attempt }],
    });
    const looping = [planning(now - 360_000, 14, 1100), planning(now - 180_000, 17, 1150), planning(now, 20, 1201)];
    expect(stuckWorkflows(looping, now, running('p'))).toEqual([{ id: 'p', why: 'activity planBatch retried from attempt 14 to 20 over 360 s without completing' }]);
    // a retry that succeeded in between (another activity pending now) is not
    const recovered = [planning(now - 360_000, 14, 1100), idle('p', now - 180_000, 1150), planning(now, 2, 1201)];
    expect(stuckWorkflows(recovered, now, running('p'))).toEqual([]);
    // retried for under five minutes: not yet
    expect(stuckWorkflows([planning(now - 200_000, 3, 10), planning(now, 9, 12)], now, running('p'))).toEqual([]);
  });
  it('an activity retried for five minutes while its workflow schedules other work is not stuck, and is listed apart', () => {
    // the disruption workflow's cloud pass, killed attempt after attempt, its rounds going on beside it
    const sample = (at: number, attempt: number, round?: string, historyLength = 500): WorkflowSample => ({
      ...idle('d', at, historyLength),
      pendingActivitiesLastProgress: [at - 5_000],
      pendingActivities: [{ id: '40', type: 'refreshCloudFacts', attempt, stage: 'cloud facts: instances' }, ...(round ? [{ id: round, type: 'planRound', attempt: 1 }] : [])],
    });
    const why = 'activity refreshCloudFacts retried from attempt 1 to 5 over 360 s without completing (at its last beat: cloud facts: instances)';
    const beside = [sample(now - 360_000, 1, '41', 500), sample(now - 180_000, 3, '44', 530), sample(now, 5, undefined, 560)];
    expect(stuckWorkflows(beside, now, running('d'))).toEqual([]);
    expect(retriedWhileProgressing(beside, running('d'))).toEqual([{ id: 'd', why }]);
    // a round pending throughout (the same id in every sample) is no new work: stuck
    const held = [sample(now - 360_000, 1, '41', 500), sample(now - 180_000, 3, '41', 510), sample(now, 5, '41', 520)];
    expect(stuckWorkflows(held, now, running('d'))).toEqual([{ id: 'd', why }]);
    expect(retriedWhileProgressing(held, running('d'))).toEqual([]);
  });
  it('a watch retried after each worker kill is not, while it heartbeats: it never completes by design', () => {
    const watching = (at: number, attempt: number, beat: number): WorkflowSample => ({ ...idle('w', at, 40), pendingActivitiesLastProgress: [beat], pendingActivities: [{ id: '1', type: 'watchCluster', attempt }] });
    const killedOften = [watching(now - 360_000, 3, now - 361_000), watching(now - 180_000, 6, now - 181_000), watching(now, 9, now - 4_000)];
    expect(stuckWorkflows(killedOften, now, running('w'))).toEqual([]);
    // the same samples of an activity that should complete are
    expect(stuckWorkflows(killedOften, now, { ...running('w'), longLived: new Set() }).map((s) => s.why)).toEqual(['activity watchCluster retried from attempt 3 to 9 over 360 s without completing']);
    // and a watch that stopped beating is
    expect(stuckWorkflows([watching(now - 360_000, 3, now - 361_000), watching(now, 3, now - 330_000)], now, running('w')).map((s) => s.why)).toEqual(['an activity without progress for 330 s']);
  });
  it('history that does not grow for five minutes while work is pending is', () => {
    const pending = (at: number, len: number): WorkflowSample => ({ ...idle('w', at, len), pendingActivitiesLastProgress: [at - 1_000] });
    expect(stuckWorkflows([pending(now - 400_000, 7), pending(now - 200_000, 7), pending(now, 7)], now, running('w')).map((s) => s.why)).toEqual(['history stayed at 7 events for 400 s with work pending']);
    expect(stuckWorkflows([pending(now - 400_000, 7), pending(now - 200_000, 9), pending(now, 9)], now, running('w'))).toEqual([]);
    // the verdict names the work: the pending activity and its last beat's step
    const draining = (at: number): WorkflowSample => ({ ...pending(at, 60), pendingActivities: [{ id: '7', type: 'drainNode', attempt: 1, stage: 'evict: waiting for PodDisruptionBudget web' }] });
    expect(stuckWorkflows([draining(now - 400_000), draining(now - 200_000), draining(now)], now, running('w')).map((s) => s.why)).toEqual(['history stayed at 60 events for 400 s with work pending: drainNode attempt 1 at evict: waiting for PodDisruptionBudget web']);
  });
});

describe('PDB violations', () => {
  const s = (at: number, currentHealthy: number, guarded = true): PdbSample => ({ pdb: 'ns/web', at, currentHealthy, desiredHealthy: 9, expectedPods: 10, guarded });
  it('groups consecutive short samples into one episode with its worst shortfall', () => {
    expect(pdbViolations([s(1, 10), s(2, 8), s(3, 7), s(4, 9), s(5, 8)])).toEqual([
      { pdb: 'ns/web', from: 2, to: 3, worstShortfall: 2 },
      { pdb: 'ns/web', from: 5, to: 5, worstShortfall: 1 },
    ]);
  });
  it('ignores shortfalls while the run itself scales the workload', () => {
    expect(pdbViolations([s(1, 3, false), s(2, 9)])).toEqual([]);
  });
  it('tells pods not placed yet (the healthy count never fell) from pods lost around the budget', () => {
    // a scale-up still arriving when consolidation began: short, rising, never a loss
    const arriving = [s(1, 3, false), s(2, 5), s(3, 5), s(4, 7), s(5, 9)];
    expect(pdbViolations(arriving)).toEqual([]);
    expect(pdbShortfalls(arriving)).toEqual([{ pdb: 'ns/web', from: 2, to: 4, worstShortfall: 4, healthyFell: false }]);
    // …and one that loses a healthy pod while still short is a violation
    expect(pdbViolations([s(1, 3, false), s(2, 5), s(3, 4), s(4, 9)])).toEqual([{ pdb: 'ns/web', from: 2, to: 3, worstShortfall: 5 }]);
  });
});

describe('Prometheus readings', () => {
  const text = [
    '# HELP temporal_workflow_task_schedule_to_start_latency x',
    'temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="a",le="10"} 50',
    'temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="a",le="100"} 90',
    'temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="a",le="+Inf"} 100',
    'temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="b",le="10"} 0',
    'temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="b",le="100"} 0',
    'temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="b",le="+Inf"} 100',
    'temporal_workflow_task_schedule_to_start_latency_sum{task_queue="a"} 12345',
    'action{namespace="default",action_type="Signal"} 7',
    'action{namespace="default",action_type="StartWorkflow"} 3',
  ].join('\n');
  it('sums a histogram over its labels and reads a quantile as the bucket’s upper bound', () => {
    const h = parseHistogram(text, 'temporal_workflow_task_schedule_to_start_latency');
    expect([...h.entries()]).toEqual([
      [10, 50],
      [100, 90],
      [Infinity, 200],
    ]);
    expect(histogramQuantile(h, 0.25)).toBe(10);
    expect(histogramQuantile(h, 0.45)).toBe(100);
    expect(histogramQuantile(h, 0.99)).toBe(Infinity);
    expect(histogramQuantile(new Map(), 0.99)).toBeUndefined();
    expect(histogramQuantile(addHistograms(h, h), 0.2)).toBe(10);
    expect(histogramQuantile(scaleBounds(h, 1000), 0.25)).toBe(10_000);
  });
  it('sums a counter over its labels', () => {
    expect(sumCounter(text, 'action')).toBe(10);
    expect(sumCounter(text, 'actions')).toBe(0);
  });
  it('reads VmRSS', () => {
    expect(rssMiBFromStatus('Name:\tnode\nVmRSS:\t  204800 kB\n')).toBe(200);
    expect(rssMiBFromStatus('Name:\tnode\n')).toBeUndefined();
  });
});

describe('NodeClaim join steps', () => {
  const t = (s: number) => new Date(Date.UTC(2026, 10, 25, 4, 0, s)).toISOString();
  const claim = (created: number, steps: Partial<Record<'Launched' | 'Registered' | 'Initialized', number>>, extra: { type: string; status: string; lastTransitionTime?: string }[] = []) => ({
    metadata: { creationTimestamp: t(created) },
    status: { conditions: [...Object.entries(steps).map(([type, s]) => ({ type, status: 'True', lastTransitionTime: t(s) })), ...extra] },
  });

  it('reads the True conditions’ transition times, and not a False one', () => {
    const timeline = claimTimeline(claim(0, { Launched: 4 }, [{ type: 'Registered', status: 'False', lastTransitionTime: t(9) }]));
    expect(timeline).toEqual({ createdAt: Date.parse(t(0)), launched: Date.parse(t(4)) });
  });

  it('measures each step on the claims that reached both its ends', () => {
    const steps = claimStepSeconds([
      claimTimeline(claim(0, { Launched: 5, Registered: 25, Initialized: 30 })),
      claimTimeline(claim(10, { Launched: 13, Registered: 73, Initialized: 75 })),
      claimTimeline(claim(20, { Launched: 40 })), // still joining: counts for launch only
      claimTimeline(claim(30, {})),
    ]);
    expect(steps.launch).toEqual({ p50: 5, p99: 20, n: 3 });
    expect(steps.register).toEqual({ p50: 20, p99: 60, n: 2 });
    expect(steps.initialize).toEqual({ p50: 2, p99: 5, n: 2 });
    expect(steps.total).toEqual({ p50: 30, p99: 65, n: 2 });
  });

  it('has no figure for a step no claim finished', () => {
    expect(claimStepSeconds([claimTimeline(claim(0, {}))]).launch).toEqual({ p50: undefined, p99: undefined, n: 0 });
  });
});

describe('default phase timeouts', () => {
  it('grow with the pods of all clusters, to what 3 × 2,000 needed, above a floor', () => {
    const of = (pods: number) => [phaseTimeout('up', pods), phaseTimeout('down', pods), phaseTimeout('delete', pods)];
    expect(of(3 * 600)).toEqual([1080, 630, 480]);
    expect(of(3 * 2000)).toEqual([3600, 2100, 600]);
    expect(of(100)).toEqual([900, 600, 480]);
  });
});
