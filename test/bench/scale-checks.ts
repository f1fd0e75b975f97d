/**
 * The chaos scale run's verdicts and figures (test/bench/scale.ts), as pure functions over
 * what the run observed: EC2 instances as moto lists them, pods and PDBs as the guest API
 * servers serve them, workflow descriptions from Temporal, samples of /proc and of the
 * workers' Prometheus exporters. No clock, no I/O: `now` is passed in, so every rule has a
 * unit test that can fail (test/unit/bench/scale-checks.test.ts).
 */

/** An EC2 instance as DescribeInstances shows it (any account, any state). */
export interface ObservedInstance {
  id: string;
  state: string;
  tags: Record<string, string>;
}

const NODECLAIM_TAG = 'karpenter.sh/nodeclaim';
const GONE_STATES = new Set(['terminated', 'shutting-down']);

export const isLive = (i: ObservedInstance) => !GONE_STATES.has(i.state);

export interface DuplicateInstances {
  /** `<cluster tag>/<NodeClaim name>`: claims are named per cluster, so two clusters may share a name */
  nodeClaim: string;
  instanceIds: string[];
}

const clusterOf = (tags: Record<string, string>) => Object.keys(tags).find((k) => k.startsWith('kubernetes.io/cluster/'))?.slice('kubernetes.io/cluster/'.length) ?? '?';

/** NodeClaims with more than one live instance at the same moment: what a launch must never leave. */
export function duplicateInstances(instances: readonly ObservedInstance[]): DuplicateInstances[] {
  const byClaim = new Map<string, string[]>();
  for (const i of instances) {
    const claim = i.tags[NODECLAIM_TAG];
    if (claim === undefined || !isLive(i)) continue;
    const key = `${clusterOf(i.tags)}/${claim}`;
    byClaim.set(key, [...(byClaim.get(key) ?? []), i.id]);
  }
  return [...byClaim.entries()]
    .filter(([, ids]) => ids.length > 1)
    .map(([nodeClaim, ids]) => ({ nodeClaim, instanceIds: [...ids].sort() }))
    .sort((a, b) => a.nodeClaim.localeCompare(b.nodeClaim));
}

/** Live instances of the given clusters (by their `kubernetes.io/cluster/<infraID>` tag): after the final delete, every one is a leak. */
export function leakedInstances(instances: readonly ObservedInstance[], clusters: readonly string[]): ObservedInstance[] {
  return instances.filter((i) => isLive(i) && clusters.some((c) => `kubernetes.io/cluster/${c}` in i.tags)).sort((a, b) => a.id.localeCompare(b.id));
}

/** A pod as the checks need it. */
export interface ObservedPod {
  name: string;
  phase: string;
  deleting: boolean;
  createdAt: string;
  /** when the Ready condition last turned True, if it is True */
  readyAt?: string;
}

/** Pods still Pending (and not on their way out). Every workload pod fits a node the pools can launch, so each is one a plan should have placed. */
export function pendingPods(pods: readonly ObservedPod[]): string[] {
  return pods.filter((p) => !p.deleting && p.phase === 'Pending').map((p) => p.name).sort();
}

/** Seconds from creation to Ready for pods that are Ready (a pod made Pending by design is Pending from its creation). */
export function pendingToRunningSeconds(pods: readonly ObservedPod[], since?: number): number[] {
  const out: number[] = [];
  for (const p of pods) {
    if (p.readyAt === undefined || p.phase !== 'Running') continue;
    const created = Date.parse(p.createdAt);
    if (since !== undefined && created < since) continue;
    out.push(Math.max(0, (Date.parse(p.readyAt) - created) / 1000));
  }
  return out;
}

/** Nearest-rank percentile (p in (0, 100]); undefined for no values. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  if (!(p > 0 && p <= 100)) throw new Error(`percentile: p must be in (0, 100], got ${p}`);
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** A NodeClaim's creation and its lifecycle conditions' transition times (epoch ms; absent: not reached). */
export interface ClaimTimeline {
  createdAt: number;
  launched?: number;
  registered?: number;
  initialized?: number;
}

export interface StepSeconds {
  p50?: number;
  p99?: number;
  /** claims that reached the step's end */
  n: number;
}

/**
 * How long claims spent in each step of joining: created → Launched (the instance is
 * running: workflow + EC2), Launched → Registered (the machine boots, its client CSR is
 * approved and signed, its Node appears), Registered → Initialized (Ready, startup taints
 * gone, resources reported). Which step is slow says which part of the join path limits a
 * scale run. A step is measured only on claims that reached both of its ends.
 */
export function claimStepSeconds(claims: readonly ClaimTimeline[]): { launch: StepSeconds; register: StepSeconds; initialize: StepSeconds; total: StepSeconds } {
  const step = (from: (c: ClaimTimeline) => number | undefined, to: (c: ClaimTimeline) => number | undefined): StepSeconds => {
    const values = claims.flatMap((c) => {
      const a = from(c);
      const b = to(c);
      return a !== undefined && b !== undefined && Number.isFinite(a) && Number.isFinite(b) ? [Math.max(0, (b - a) / 1000)] : [];
    });
    return { p50: percentile(values, 50), p99: percentile(values, 99), n: values.length };
  };
  return {
    launch: step((c) => c.createdAt, (c) => c.launched),
    register: step((c) => c.launched, (c) => c.registered),
    initialize: step((c) => c.registered, (c) => c.initialized),
    total: step((c) => c.createdAt, (c) => c.initialized),
  };
}

/** A claim's timeline from its object: creationTimestamp and the True conditions' lastTransitionTime. */
export function claimTimeline(claim: { metadata: { creationTimestamp?: string }; status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] } }): ClaimTimeline {
  const at = (type: string) => {
    const c = claim.status?.conditions?.find((x) => x.type === type && x.status === 'True');
    const t = c?.lastTransitionTime !== undefined ? Date.parse(c.lastTransitionTime) : NaN;
    return Number.isFinite(t) ? t : undefined;
  };
  const launched = at('Launched');
  const registered = at('Registered');
  const initialized = at('Initialized');
  return {
    createdAt: Date.parse(claim.metadata.creationTimestamp ?? ''),
    ...(launched !== undefined ? { launched } : {}),
    ...(registered !== undefined ? { registered } : {}),
    ...(initialized !== undefined ? { initialized } : {}),
  };
}

/** NodeClaims created per minute between the first and last creation (one claim: undefined, no rate to speak of). */
export function perMinute(timestamps: readonly number[]): number | undefined {
  if (timestamps.length < 2) return undefined;
  const first = Math.min(...timestamps);
  const last = Math.max(...timestamps);
  if (last === first) return undefined;
  return (timestamps.length - 1) / ((last - first) / 60_000);
}

/** What the run knows about a running workflow at one moment (DescribeWorkflowExecution). */
export interface WorkflowSample {
  id: string;
  at: number;
  historyLength: number;
  /** scheduled time of a workflow task not yet completed */
  pendingWorkflowTaskSince?: number;
  /** per pending activity: the latest of scheduled / last started / last heartbeat */
  pendingActivitiesLastProgress: number[];
  /** per pending activity: which one, and its attempt (a retried activity is pending throughout) */
  pendingActivities?: { id: string; type: string; attempt: number; stage?: string; lastFailure?: string }[];
}

export interface StuckWorkflow {
  id: string;
  why: string;
}

/** Activities that run for as long as their cluster (or the management cluster) is served: the watches. */
export const LONG_LIVED_ACTIVITIES: ReadonlySet<string> = new Set(['watchCluster', 'watchHostedClusters']);

/**
 * Stuck = running with work outstanding and no progress for `thresholdMs`: a workflow task
 * scheduled that long ago and not done, or an activity that has not started, heartbeat or
 * been retried for that long, or one retried all that while without an attempt
 * completing while nothing else was scheduled, or — across two samples that far apart —
 * history that did not grow while something was pending. A workflow waiting on a timer or
 * a signal with nothing pending is idle, not stuck (a steady NodeClaim sleeps 5 minutes by
 * design).
 */
export function stuckWorkflows(samples: readonly WorkflowSample[], now: number, options: { runningNow: ReadonlySet<string>; thresholdMs?: number; longLived?: ReadonlySet<string> }): StuckWorkflow[] {
  const thresholdMs = options.thresholdMs ?? 300_000;
  const longLived = options.longLived ?? LONG_LIVED_ACTIVITIES;
  const stuck: StuckWorkflow[] = [];
  for (const [id, ordered] of samplesOfRunning(samples, options.runningNow)) {
    const latest = ordered[ordered.length - 1];
    if (!latest) continue;
    if (latest.pendingWorkflowTaskSince !== undefined && now - latest.pendingWorkflowTaskSince >= thresholdMs) {
      stuck.push({ id, why: `a workflow task pending for ${Math.round((now - latest.pendingWorkflowTaskSince) / 1000)} s` });
      continue;
    }
    const oldest = latest.pendingActivitiesLastProgress.length > 0 ? Math.min(...latest.pendingActivitiesLastProgress) : undefined;
    if (oldest !== undefined && now - oldest >= thresholdMs) {
      stuck.push({ id, why: `an activity without progress for ${Math.round((now - oldest) / 1000)} s` });
      continue;
    }
    // an activity retried for that long without one attempt completing: each retry looks like
    // progress (a start, a heartbeat), and signals grow the history, but nothing gets done
    // (the provisioner's planBatch at attempt 20 in a 3 × 600 run, every attempt timed out)
    // (an activity that runs for as long as the cluster is enabled never completes by design;
    // a killed worker's attempt is retried, and it is judged by its heartbeats alone)
    // — unless the workflow scheduled other work meanwhile: it progressed beside the retries
    // (the disruption workflow's rounds beside a cloud pass; listed by retriedWhileProgressing)
    const retried = longRetried(ordered, thresholdMs, longLived);
    if (retried && !retried.progressed) {
      stuck.push({ id, why: retried.why });
      continue;
    }
    // (a watch pending while its workflow waits is no work outstanding: its history stays still by design)
    const pending = (s: WorkflowSample) => s.pendingWorkflowTaskSince !== undefined || (s.pendingActivities ? s.pendingActivities.some((a) => !longLived.has(a.type)) : s.pendingActivitiesLastProgress.length > 0);
    const earlier = ordered.find((s) => latest.at - s.at >= thresholdMs && s.historyLength === latest.historyLength && pending(s));
    if (earlier && pending(latest) && ordered.filter((s) => s.at >= earlier.at).every((s) => s.historyLength === latest.historyLength && pending(s))) {
      // which work: the pending activity and the step its last beat named (a drain held by a PDB reads differently from a lost task)
      const work = (latest.pendingActivities ?? []).filter((a) => !longLived.has(a.type)).map((a) => `${a.type} attempt ${a.attempt}${a.stage ? ` at ${a.stage}` : ''}`);
      const what = latest.pendingWorkflowTaskSince !== undefined ? ['a workflow task', ...work] : work;
      stuck.push({ id, why: `history stayed at ${latest.historyLength} events for ${Math.round((latest.at - earlier.at) / 1000)} s with work pending${what.length > 0 ? `: ${what.join(', ')}` : ''}` });
    }
  }
  return stuck.sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * Each running workflow's samples, oldest first. Only workflows running now: one that ended
 * since its last sample made progress by ending.
 */
function samplesOfRunning(samples: readonly WorkflowSample[], runningNow: ReadonlySet<string>): Map<string, WorkflowSample[]> {
  const byId = new Map<string, WorkflowSample[]>();
  for (const s of samples) {
    if (!runningNow.has(s.id)) continue;
    const list = byId.get(s.id);
    if (list) list.push(s);
    else byId.set(s.id, [s]);
  }
  for (const list of byId.values()) list.sort((a, b) => a.at - b.at);
  return byId;
}

interface LongRetry {
  why: string;
  /** another activity was scheduled while it was retried */
  progressed: boolean;
}

/** A non-long-lived activity pending in every sample of the last `thresholdMs`, its attempt grown meanwhile. */
function longRetried(ordered: readonly WorkflowSample[], thresholdMs: number, longLived: ReadonlySet<string>): LongRetry | undefined {
  const latest = ordered[ordered.length - 1];
  if (!latest) return undefined;
  const same = (a: { id: string; type: string }) => (b: { id: string; type: string }) => b.id === a.id && b.type === a.type;
  for (const a of (latest.pendingActivities ?? []).filter((x) => !longLived.has(x.type))) {
    const since = ordered.find((s) => latest.at - s.at >= thresholdMs && (s.pendingActivities ?? []).some((b) => same(a)(b) && b.attempt < a.attempt));
    if (since === undefined) continue;
    const window = ordered.filter((s) => s.at >= since.at);
    if (!window.every((s) => (s.pendingActivities ?? []).some(same(a)))) continue;
    const first = ordered.find((s) => (s.pendingActivities ?? []).some(same(a)));
    const from = first?.pendingActivities?.find(same(a))?.attempt ?? 1;
    const where = [a.stage ? `at its last beat: ${a.stage}` : '', a.lastFailure ? `last failure: ${a.lastFailure}` : ''].filter(Boolean).join('; ');
    // activity ids are scheduling order: one pending now that was not at the window's start is new work
    const atStart = new Set((since.pendingActivities ?? []).map((b) => b.id));
    const progressed = window.some((s) => (s.pendingActivities ?? []).some((b) => !longLived.has(b.type) && !same(a)(b) && !atStart.has(b.id)));
    return { why: `activity ${a.type} retried from attempt ${from} to ${a.attempt} over ${Math.round((latest.at - (first?.at ?? latest.at)) / 1000)} s without completing${where ? ` (${where})` : ''}`, progressed };
  }
  return undefined;
}

/**
 * Workflows not stuck, but with an activity retried for `thresholdMs` without completing
 * while they went on with other work: not a lost workflow, still a slow or failing step
 * the report names (a cloud pass killed attempt after attempt at the peak of a scale-out).
 */
export function retriedWhileProgressing(samples: readonly WorkflowSample[], options: { runningNow: ReadonlySet<string>; thresholdMs?: number; longLived?: ReadonlySet<string> }): StuckWorkflow[] {
  const found: StuckWorkflow[] = [];
  for (const [id, ordered] of samplesOfRunning(samples, options.runningNow)) {
    const retried = longRetried(ordered, options.thresholdMs ?? 300_000, options.longLived ?? LONG_LIVED_ACTIVITIES);
    if (retried?.progressed) found.push({ id, why: retried.why });
  }
  return found.sort((a, b) => a.id.localeCompare(b.id));
}

/** One reading of a PodDisruptionBudget's status. */
export interface PdbSample {
  pdb: string;
  at: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  /** whether the run was in a phase where autonode disrupts (consolidation), rather than scaling the workload itself */
  guarded: boolean;
}

export interface PdbViolation {
  pdb: string;
  from: number;
  to: number;
  worstShortfall: number;
}

/** Consecutive guarded samples of one PDB below what it demands; `healthyFell`: healthy pods were lost during it. */
export interface PdbShortfall extends PdbViolation {
  healthyFell: boolean;
}

/**
 * Episodes in which a PDB had fewer healthy pods than it demands while autonode was the one
 * disrupting (guarded samples). Consecutive short samples of one PDB form one episode. An
 * episode in which the healthy count fell (from the sample before it, or within it) is a
 * violation: evictions through the API cannot do that — the API server refuses them — so
 * pods went another way, a node or instance removed before its pods were evicted. One in
 * which it never fell is pods not placed yet (a scale-up still arriving when the guarded
 * phase began), which no disruption caused. (A loss hidden by an arrival in the same sample
 * interval would be missed; samples are seconds apart.)
 */
export function pdbShortfalls(samples: readonly PdbSample[]): PdbShortfall[] {
  const byPdb = new Map<string, PdbSample[]>();
  for (const s of samples) byPdb.set(s.pdb, [...(byPdb.get(s.pdb) ?? []), s]);
  const out: PdbShortfall[] = [];
  for (const [pdb, list] of byPdb) {
    let open: PdbShortfall | undefined;
    let previous: PdbSample | undefined;
    for (const s of [...list].sort((a, b) => a.at - b.at)) {
      const shortfall = s.desiredHealthy - s.currentHealthy;
      if (s.guarded && shortfall > 0 && s.expectedPods > 0) {
        open ??= { pdb, from: s.at, to: s.at, worstShortfall: 0, healthyFell: false };
        open.to = s.at;
        open.worstShortfall = Math.max(open.worstShortfall, shortfall);
        if (previous && s.currentHealthy < previous.currentHealthy) open.healthyFell = true;
      } else if (open) {
        out.push(open);
        open = undefined;
      }
      previous = s;
    }
    if (open) out.push(open);
  }
  return out.sort((a, b) => a.from - b.from || a.pdb.localeCompare(b.pdb));
}

/** The shortfalls in which healthy pods were lost: disruption that went around a PDB. */
export function pdbViolations(samples: readonly PdbSample[]): PdbViolation[] {
  return pdbShortfalls(samples)
    .filter((e) => e.healthyFell)
    .map(({ pdb, from, to, worstShortfall }) => ({ pdb, from, to, worstShortfall }));
}

/** A Prometheus histogram: cumulative bucket counts by upper bound (+Inf included). */
export type Histogram = Map<number, number>;

/**
 * Sums the `<name>_bucket` series of a Prometheus text exposition over all their labels
 * (task queues, workflow types) into one histogram.
 */
export function parseHistogram(text: string, name: string): Histogram {
  const out: Histogram = new Map();
  const prefix = `${name}_bucket{`;
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (le === undefined || !Number.isFinite(value)) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    out.set(bound, (out.get(bound) ?? 0) + value);
  }
  return out;
}

/** The same histogram with its bucket bounds multiplied (e.g. seconds to milliseconds). */
export function scaleBounds(h: Histogram, factor: number): Histogram {
  return new Map([...h.entries()].map(([bound, count]) => [bound * factor, count]));
}

export function addHistograms(...histograms: readonly Histogram[]): Histogram {
  const out: Histogram = new Map();
  for (const h of histograms) for (const [bound, count] of h) out.set(bound, (out.get(bound) ?? 0) + count);
  return out;
}

/** The upper bound of the bucket the q-quantile falls in (what histogram_quantile would interpolate within); undefined when empty. */
export function histogramQuantile(h: Histogram, q: number): number | undefined {
  const bounds = [...h.keys()].sort((a, b) => a - b);
  const total = h.get(Infinity) ?? (bounds.length > 0 ? h.get(bounds[bounds.length - 1] ?? 0) : undefined) ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  for (const b of bounds) if ((h.get(b) ?? 0) >= rank) return b;
  return Infinity;
}

/** Sum of a counter's series (all labels) in a Prometheus text exposition. */
export function sumCounter(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (Number.isFinite(value)) sum += value;
    }
  }
  return sum;
}

export interface RssSummary {
  meanMiB: number;
  maxMiB: number;
  samples: number;
}

export function summarizeRss(samplesMiB: readonly number[]): RssSummary | undefined {
  if (samplesMiB.length === 0) return undefined;
  return { meanMiB: samplesMiB.reduce((a, b) => a + b, 0) / samplesMiB.length, maxMiB: Math.max(...samplesMiB), samples: samplesMiB.length };
}

/** `VmRSS` of a /proc/<pid>/status text, in MiB. */
export function rssMiBFromStatus(status: string): number | undefined {
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return kib === undefined ? undefined : Number(kib) / 1024;
}

/**
 * `npm run scale`'s default phase timeouts (seconds), grown with the pods of all clusters.
 * On this project's 2-core machine 3 × 2,000 pods (the default) took 1,727 / 1,375 / 164 s
 * (docs/capacity.md, session 23) and gets 3,600 / 2,100 / 600; 3 × 600, which passed with
 * 900 / 600 / 480, gets 1,080 / 630 / 480.
 */
export const phaseTimeouts = {
  up: { perPod: 0.6, least: 900 },
  down: { perPod: 0.35, least: 600 },
  delete: { perPod: 0.1, least: 480 },
} as const;

export function phaseTimeout(phase: keyof typeof phaseTimeouts, pods: number): number {
  const { perPod, least } = phaseTimeouts[phase];
  return Math.max(least, Math.ceil(perPod * pods));
}
