import {
  ActivityFailure,
  allHandlersFinished,
  isCancellation,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { ACTIVITY_HEARTBEAT } from './activity-options';
import { declareVersioningBehavior } from './versioning';
import type { CloudFactsResult, DisruptionActivities, PodEventMemory } from '../activities/disruption/activity';
import type { MultiNodeSimulation, ProvisionerActivities } from '../activities/provisioner/activity';
import { batchToCreate, type PlannedBatch } from '../core/provisioning/batch';
import type { Blocked, ConsolidationDecision, DisruptionCommand } from '../core/disruption';
import { decidedShape, type DecidedShape } from '../core/disruption/consolidate';
import { ClusterRefSchema, TaskQueuesSchema, defaultTaskQueues, durationToMs, type ClusterRef, type TaskQueues } from '../core/lifecycle';
import { AutoNodeCluster, AutoNodePhase } from './search-attributes';

export interface DisruptionStatus {
  cluster: string;
  rounds: number;
  /** managed nodes the last round saw, and how many each method could take */
  lastRound?: { at: string; nodes: number; considered: Record<string, number> };
  /** the command being carried out, and its step */
  inFlight?: { command: DisruptionCommand; step: 'planning replacements' | 'validating' | 'tainting' | 'launching replacements' | 'deleting' | 'waiting for the nodes to go'; since: string; replacements?: string[] };
  /** the last command finished or given up */
  lastCommand?: { command: DisruptionCommand; outcome: 'done' | 'abandoned'; why?: string; at: string };
  /** nodes a method would take but for a rule the admin controls, and that rule */
  blocked: Blocked[];
  /** the last round that could not read the cluster (every retry failed), until one can */
  lastRoundError?: { at: string; message: string };
  /** the last cloud pass (node class resolution, each instance's subnet and groups for drift) */
  lastCloudFacts?: { at: string } & CloudFactsResult;
  /** the last cloud pass that failed every retry, until one succeeds (drift from the cloud waits) */
  lastCloudFactsError?: { at: string; message: string };
  /** the cloud pass running now (the rounds wait for it a while, then go on beside it): since when */
  cloudFactsRunningSince?: string;
  /** the last multi-node simulation: how many candidates, each prefix tried and its verdict */
  lastMultiNode?: { at: string; candidates: number; tried: MultiNodeSimulation['tried']; verdict: string };
  commands: number;
}

export const disruptionStatusQuery = defineQuery<DisruptionStatus>('status');
/** Run a round now (after a NodePool edit, say) instead of at the next poll. */
export const disruptNowSignal = defineSignal('disruptNow');

export interface DisruptionWorkflowInput {
  cluster: ClusterRef;
  taskQueues?: Partial<TaskQueues>;
  /** Karpenter's polling period: 10 s */
  pollInterval?: string;
  /** Karpenter's commandValidationDelay: 15 s */
  validationDelay?: string;
  /** how long a command waits for its nodes to go before the next round goes on without it */
  commandTimeout?: string;
  /** how long replacements may take to initialize before the command is given up (launch + registration) */
  replacementTimeout?: string;
  /** the provisioner's batch max, for the nomination window */
  batchMax?: string;
  /** Karpenter's SpotToSpotConsolidation feature gate: replace spot nodes with cheaper spot (default off) */
  spotToSpot?: boolean;
  /** how many consolidation candidates one round simulates at most */
  consolidationTries?: number;
  /**
   * Beyond Karpenter: a consolidation may re-pack its candidates' pods into several new
   * nodes when that saves at least this share of their price at the worst launch prices
   * (default 0.05); `false` keeps Karpenter's rules (at most one new node per command).
   */
  manyToMany?: { minSavings: number } | false;
  /**
   * How often the cloud pass asks EC2 what drift needs (node class resolution, each
   * instance's subnet and security groups): default 5m, Karpenter's drift re-check.
   */
  cloudFactsInterval?: string;
  /**
   * How long a round waits for a cloud pass that is due (default 1m) before it goes on
   * beside it. A pass asks EC2 and can outlast many rounds when EC2 is slow or throttling,
   * or when its worker keeps restarting; consolidation and expiry need no cloud facts.
   */
  cloudFactsWait?: string;
  carried?: { memory: PodEventMemory; nextCloudFactsAt?: number; classesKey?: string; rounds: number; commands: number; lastCommand?: DisruptionStatus['lastCommand']; lastMultiNode?: DisruptionStatus['lastMultiNode']; tried?: Record<string, string>; triedMulti?: string };
}

// the replacement plan is a packing batch: the packing queue, heartbeats while solving
const packingActivities = (queue: string) =>
  proxyActivities<ProvisionerActivities>({
    taskQueue: queue,
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '20 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
  });

const activities = (queue: string) =>
  proxyActivities<DisruptionActivities>({
    taskQueue: queue,
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: ACTIVITY_HEARTBEAT,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
  });

// the cloud pass: paged EC2 reads, a write per claim whose facts moved; a pass that fails
// every attempt is tried again a minute later, the rounds going on meanwhile
const cloudFactsActivities = (queue: string) =>
  proxyActivities<Pick<DisruptionActivities, 'refreshCloudFacts'>>({
    taskQueue: queue,
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: ACTIVITY_HEARTBEAT,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
  });

// a round reads the whole cluster (minutes at thousands of nodes): long, but heartbeating
const roundActivities = (queue: string) =>
  proxyActivities<Pick<DisruptionActivities, 'planRound' | 'validateCommand'>>({
    taskQueue: queue,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
  });

/**
 * One per cluster (`autonode/<cluster>/disruption`): every poll interval, a round decides
 * (Karpenter's methods in order; see core/disruption/round.ts), and a command found is
 * carried out the way Karpenter's queue does — validated again after the delay (the plan
 * must still hold), the nodes tainted `karpenter.sh/disrupted:NoSchedule`, their NodeClaims
 * deleted (each one's workflow drains, PDB-aware, and terminates), and waited for; a command
 * that no longer holds is abandoned and its taints taken back. Right after a command the
 * next round runs at once.
 */
export async function disruptionWorkflow(input: DisruptionWorkflowInput): Promise<void> {
  const cluster = ClusterRefSchema.parse(input.cluster);
  const taskQueues = TaskQueuesSchema.parse({ ...defaultTaskQueues, ...input.taskQueues });
  const act = activities(taskQueues.control);
  const rounds = roundActivities(taskQueues.control);
  const cloudFacts = cloudFactsActivities(taskQueues.control);
  const cloudFactsMs = durationToMs(input.cloudFactsInterval ?? '5m') ?? 300_000;
  let nextCloudFactsAt = input.carried?.nextCloudFactsAt ?? 0;
  const cloudFactsWaitMs = durationToMs(input.cloudFactsWait ?? '1m') ?? 60_000;
  // the cloud pass in flight beside the rounds, and whether a class edit wants another right after it
  let cloudPass: Promise<void> | undefined;
  let cloudPassAgain = false;
  // the node classes (names, generations) the rounds last saw: an edit brings the cloud pass forward
  let classesKey = input.carried?.classesKey;
  const packing = packingActivities(taskQueues.packing);
  const replacementTimeoutMs = durationToMs(input.replacementTimeout ?? '20m') ?? 1_200_000;
  const pollMs = durationToMs(input.pollInterval ?? '10s') ?? 10_000;
  const validationMs = durationToMs(input.validationDelay ?? '15s') ?? 15_000;
  const commandTimeoutMs = durationToMs(input.commandTimeout ?? '10m') ?? 600_000;
  const batchMaxMs = durationToMs(input.batchMax ?? '10s') ?? 10_000;

  let memory: PodEventMemory = input.carried?.memory ?? {};
  // consolidation candidates simulated without a command, by the pod set they had then: not simulated again until it changes
  let tried: Record<string, string> = input.carried?.tried ?? {};
  // the multi-node candidate set last simulated without a command, by its pods: not simulated again until it changes
  let triedMulti = input.carried?.triedMulti;
  const manyToMany = input.manyToMany === false ? undefined : (input.manyToMany ?? { minSavings: 0.05 });
  const settings = { spotToSpot: input.spotToSpot ?? false, ...(manyToMany ? { manyToMany } : {}) };
  let now = false;
  const status: DisruptionStatus = { cluster: cluster.name, rounds: input.carried?.rounds ?? 0, commands: input.carried?.commands ?? 0, blocked: [], ...(input.carried?.lastCommand ? { lastCommand: input.carried.lastCommand } : {}), ...(input.carried?.lastMultiNode ? { lastMultiNode: input.carried.lastMultiNode } : {}) };
  setHandler(disruptionStatusQuery, () => status);
  setHandler(disruptNowSignal, () => void (now = true));
  upsertSearchAttributes([
    { key: AutoNodeCluster, value: cluster.name },
    { key: AutoNodePhase, value: 'Disrupting' },
  ]);
  const stamp = () => new Date().toISOString();
  const step = (command: DisruptionCommand, name: NonNullable<DisruptionStatus['inFlight']>['step'], replacements?: string[]) =>
    void (status.inFlight = { command, step: name, since: stamp(), ...(replacements ? { replacements } : {}) });
  const done = (command: DisruptionCommand, outcome: 'done' | 'abandoned', why?: string) =>
    void (status.lastCommand = { command, outcome, ...(why !== undefined ? { why } : {}), at: stamp() });

  /**
   * Karpenter's command queue: plan the replacements (when pods must move), wait the
   * validation delay and decide again, taint, launch the replacements and wait until they
   * are Initialized, and only then delete the candidates. A replacement that fails gives
   * the command up: the taints go, the candidates stay.
   */
  async function carryOut(command: DisruptionCommand, simulated?: PlannedBatch, decided?: DecidedShape): Promise<void> {
    let replacements: string[] = simulated?.claims.map((c) => c.name) ?? [];
    let planned: PlannedBatch | undefined = simulated;
    if (command.replace && planned === undefined) {
      step(command, 'planning replacements');
      planned = await packing.planReplacements({ cluster, taskQueues, batchId: uuid4(), nodes: command.candidates.map((c) => c.node), unavailable: [] });
      if (planned.unschedulable > 0) return done(command, 'abandoned', `${planned.unschedulable} pod(s) would fit nowhere without the node(s)`);
      replacements = planned.claims.map((c) => c.name);
    }
    step(command, 'validating', replacements);
    await sleep(validationMs);
    const valid = await rounds.validateCommand({ cluster, command, memory, batchMaxMs });
    if (!valid.ok) return done(command, 'abandoned', valid.reason);
    // Karpenter re-simulates a consolidation after the delay: the same shape, or it is dropped
    if (decided && patched('consolidation-revalidation')) {
      const again = await packing
        .revalidateConsolidation({ cluster, taskQueues, batchId: uuid4(), unavailable: [], candidates: command.candidates.map(({ nodeClaim, node }) => ({ nodeClaim, node })), decided, ...settings })
        .catch((err: unknown) => ({ ok: false as const, reason: `re-simulation failed: ${failureMessage(err)}` }));
      if (!again.ok) return done(command, 'abandoned', again.reason);
    }
    step(command, 'tainting', replacements);
    await act.startCommand({ cluster, command });
    if (planned && replacements.length > 0) {
      step(command, 'launching replacements', replacements);
      await packing.createClaims({ cluster, taskQueues, ...batchToCreate(planned) });
      const deadline = Date.now() + replacementTimeoutMs;
      for (;;) {
        const state = await act.replacementsState({ cluster, names: replacements });
        if (state.gone.length > 0 || Date.now() > deadline) {
          const why = state.gone.length > 0 ? `replacement(s) ${state.gone.join(', ')} failed` : `replacements not initialized after ${input.replacementTimeout ?? '20m'}`;
          await act.abandonCommand({ cluster, command, why });
          return done(command, 'abandoned', why);
        }
        if (state.initialized.length === replacements.length) break;
        await sleep('2 seconds');
      }
    }
    step(command, 'deleting', replacements);
    await act.deleteCandidates({ cluster, command });
    step(command, 'waiting for the nodes to go', replacements);
    const deadline = Date.now() + commandTimeoutMs;
    let left = await act.commandNodesLeft({ cluster, command });
    while (left.length > 0 && Date.now() < deadline) {
      await sleep('2 seconds');
      left = await act.commandNodesLeft({ cluster, command });
    }
    status.commands++;
    done(command, 'done', left.length > 0 ? `still draining after ${input.commandTimeout ?? '10m'}: ${left.join(', ')}` : undefined);
  }

  /**
   * Starts the cloud pass. When it ends (every retry failed or not) the next one is due a
   * cloud facts interval after this one started, a minute after if it failed, or at once
   * if a round saw a class edit meanwhile.
   */
  function startCloudPass(): Promise<void> {
    const started = Date.now();
    status.cloudFactsRunningSince = stamp();
    const pass = cloudFacts.refreshCloudFacts({ cluster }).then(
      (facts) => {
        delete status.lastCloudFactsError;
        status.lastCloudFacts = { at: stamp(), ...facts };
        return true;
      },
      (err: unknown) => {
        status.lastCloudFactsError = { at: stamp(), message: failureMessage(err) };
        return false;
      },
    );
    return pass.then((ok) => {
      nextCloudFactsAt = cloudPassAgain ? 0 : started + (ok ? cloudFactsMs : Math.min(cloudFactsMs, 60_000));
      cloudPassAgain = false;
      cloudPass = undefined;
      delete status.cloudFactsRunningSince;
    });
  }

  for (;;) {
    // (checked here rather than at the end of the loop body: the same point between rounds, so the same commands)
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > 2_000) {
      // a pass in flight ends in this run (its retries are bounded), so the next run starts clean
      await condition(() => cloudPass === undefined);
      await condition(allHandlersFinished);
      await continueAsNew<typeof disruptionWorkflow>({ ...input, carried: { memory, ...(nextCloudFactsAt > 0 ? { nextCloudFactsAt } : {}), ...(classesKey !== undefined ? { classesKey } : {}), rounds: status.rounds, commands: status.commands, ...(status.lastCommand ? { lastCommand: status.lastCommand } : {}), tried, ...(triedMulti !== undefined ? { triedMulti } : {}), ...(status.lastMultiNode ? { lastMultiNode: status.lastMultiNode } : {}) } });
    }
    // what drift needs from EC2, on its own cadence (before this, every round asked EC2)
    if (cloudPass === undefined && Date.now() >= nextCloudFactsAt && patched('cloud-facts-pass') && patched('cloud-facts-beside-rounds')) {
      // the round waits a while (the first round and a class edit's drift want fresh facts),
      // then goes on beside a pass that is slow: one that fails every attempt takes minutes
      cloudPass = startCloudPass();
      await condition(() => cloudPass === undefined, cloudFactsWaitMs);
    } else if (cloudPass === undefined && Date.now() >= nextCloudFactsAt && patched('cloud-facts-pass')) {
      const started = Date.now();
      const facts = await cloudFacts.refreshCloudFacts({ cluster }).catch((err: unknown) => {
        status.lastCloudFactsError = { at: stamp(), message: failureMessage(err) };
        return undefined;
      });
      if (facts) {
        delete status.lastCloudFactsError;
        status.lastCloudFacts = { at: stamp(), ...facts };
      }
      nextCloudFactsAt = started + (facts ? cloudFactsMs : Math.min(cloudFactsMs, 60_000));
    }
    // a round whose reads failed every retry (the guest unreachable for minutes) is skipped, not the workflow ended
    const round = await rounds.planRound({ cluster, memory, batchMaxMs }).catch((err: unknown) => {
      status.lastRoundError = { at: stamp(), message: failureMessage(err) };
      return undefined;
    });
    if (round === undefined) {
      await condition(() => now, pollMs);
      now = false;
      continue;
    }
    delete status.lastRoundError;
    memory = round.memory;
    // a class created or edited: what it resolves to is wanted now (an AMI or subnet change drifts at once, as Karpenter's class controller resolves on an edit)
    if (round.classesKey !== undefined && round.classesKey !== classesKey) {
      if (classesKey !== undefined) {
        nextCloudFactsAt = 0;
        if (cloudPass !== undefined) cloudPassAgain = true;
      }
      classesKey = round.classesKey;
    }
    status.rounds++;
    status.lastRound = { at: stamp(), nodes: round.nodes, considered: round.considered };
    status.blocked = round.blocked;
    let command = round.command;
    let simulated: PlannedBatch | undefined;
    let decided: DecidedShape | undefined;
    // Multi-node first (Karpenter's order): the longest worthwhile prefix of the candidates.
    const multi = round.multiNode ?? [];
    const multiKey = multi.map((c) => `${c.nodeClaim}=${memory[c.nodeClaim]?.pods ?? ''}`).join(',');
    if (!command && multi.length >= 2 && multiKey !== triedMulti) {
      const sim = await packing
        .simulateMultiNodeConsolidation({ cluster, taskQueues, batchId: uuid4(), unavailable: [], candidates: multi.map(({ nodeClaim, node }) => ({ nodeClaim, node })), ...settings })
        .catch((err: unknown): MultiNodeSimulation => ({ simulations: 0, tried: [], candidates: [], decision: { kind: 'reject', reason: `simulation failed: ${failureMessage(err)}` } }));
      status.lastMultiNode = { at: stamp(), candidates: multi.length, tried: sim.tried ?? [], verdict: sim.decision.kind === 'reject' ? sim.decision.reason : sim.decision.kind };
      // a transient rejection (pending pods still waiting for nodes) is simulated again next round
      if (sim.decision.kind === 'reject') triedMulti = sim.decision.transient ? triedMulti : multiKey;
      else {
        const chosen = new Set(sim.candidates.map((c) => c.nodeClaim));
        command = { method: 'consolidation', reason: 'Underutilized', candidates: multi.filter((c) => chosen.has(c.nodeClaim)), replace: sim.decision.kind !== 'delete', summary: consolidationSummary(sim.decision, chosen.size, sim.lpBoundPerHour) };
        decided = decidedShape(sim.decision);
        if (sim.decision.kind !== 'delete') simulated = sim.planned;
      }
    }
    if (!command && round.consolidate) {
      tried = Object.fromEntries(Object.entries(tried).filter(([claim, pods]) => memory[claim]?.pods === pods));
      for (const c of round.consolidate.filter((x) => tried[x.nodeClaim] === undefined).slice(0, input.consolidationTries ?? 3)) {
        const sim = await packing
          .simulateConsolidation({ cluster, taskQueues, batchId: uuid4(), unavailable: [], nodeClaim: c.nodeClaim, node: c.node, ...settings })
          .catch((err: unknown): { planned?: undefined; decision: ConsolidationDecision; lpBoundPerHour?: undefined } => ({ decision: { kind: 'reject', reason: `simulation failed: ${failureMessage(err)}` } }));
        if (sim.decision.kind === 'reject') {
          if (!sim.decision.transient) tried[c.nodeClaim] = memory[c.nodeClaim]?.pods ?? '';
          status.blocked.push({ nodeClaim: c.nodeClaim, method: 'consolidation', reason: sim.decision.reason });
          continue;
        }
        command = { method: 'consolidation', reason: 'Underutilized', candidates: [c], replace: sim.decision.kind !== 'delete', summary: consolidationSummary(sim.decision, 1, sim.lpBoundPerHour) };
        decided = decidedShape(sim.decision);
        if (sim.decision.kind !== 'delete') simulated = sim.planned;
        break;
      }
    }
    if (command) {
      await carryOut(command, simulated, decided);
      delete status.inFlight;
      // a command given up waits for the next poll: the same plan at once would fail the same way
      if (status.lastCommand?.outcome === 'abandoned') await condition(() => now, pollMs);
      now = false;
    } else {
      now = false;
      await condition(() => now, pollMs);
    }
  }
}

/**
 * A consolidation command in words (status, Events): what goes, what comes, what it saves;
 * a re-pack also says what its new nodes cost against the LP lower bound for the same pods.
 */
export function consolidationSummary(decision: Exclude<ConsolidationDecision, { kind: 'reject' }>, nodes: number, lpBoundPerHour?: number): string {
  const saves = `saves $${decision.savingsPerHour.toFixed(4)}/h`;
  const few = (names: readonly string[]) => `${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''}`;
  const what = nodes === 1 ? 'its pods' : `the pods of ${nodes} nodes`;
  switch (decision.kind) {
    case 'delete':
      return `underutilized: ${what} fit elsewhere, ${saves}`;
    case 'replace':
      return `underutilized: ${what} fit one cheaper node (${few(decision.options)}) ${saves}`;
    case 'repack':
      return `underutilized: ${what} re-packed into ${decision.claims.length} cheaper nodes (${few(decision.claims.map((c) => c.options[0] ?? '?'))}) ${saves}, at least $${decision.worstSavingsPerHour.toFixed(4)}/h${againstBound(decision.pricePerHour, lpBoundPerHour)}`;
  }
}

/** `; new nodes $0.2880/h, LP bound $0.2700/h (1.067×)`, or nothing without a bound. */
function againstBound(pricePerHour: number, bound: number | undefined): string {
  if (bound === undefined) return '';
  const ratio = bound > 0 ? ` (${(pricePerHour / bound).toFixed(3)}×)` : '';
  return `; new nodes $${pricePerHour.toFixed(4)}/h, LP bound $${bound.toFixed(4)}/h${ratio}`;
}

/** What an activity that failed every retry says; a cancellation (the workflow's own) is not caught. */
function failureMessage(err: unknown): string {
  if (isCancellation(err)) throw err;
  if (err instanceof ActivityFailure) return err.cause?.message ?? err.message;
  return err instanceof Error ? err.message : String(err);
}

// ADR 0009: one run per cluster that never ends; it follows the deployment's current build at
// its next workflow task, replaying its history there (patched() and the committed histories
// keep that safe).
declareVersioningBehavior('AUTO_UPGRADE', disruptionWorkflow);
