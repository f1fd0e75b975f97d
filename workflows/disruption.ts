import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { DisruptionActivities, PodEventMemory } from '../activities/disruption/activity';
import type { Blocked, DisruptionCommand } from '../core/disruption';
import { ClusterRefSchema, TaskQueuesSchema, defaultTaskQueues, durationToMs, type ClusterRef, type TaskQueues } from '../core/lifecycle';
import { AutoNodeCluster, AutoNodePhase } from './search-attributes';

export interface DisruptionStatus {
  cluster: string;
  rounds: number;
  /** managed nodes the last round saw, and how many each method could take */
  lastRound?: { at: string; nodes: number; considered: Record<string, number> };
  /** the command being carried out, and its step */
  inFlight?: { command: DisruptionCommand; step: 'validating' | 'tainting' | 'deleting' | 'waiting for the nodes to go'; since: string };
  /** the last command finished or given up */
  lastCommand?: { command: DisruptionCommand; outcome: 'done' | 'abandoned'; why?: string; at: string };
  /** nodes a method would take but for a rule the admin controls, and that rule */
  blocked: Blocked[];
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
  /** the provisioner's batch max, for the nomination window */
  batchMax?: string;
  carried?: { memory: PodEventMemory; rounds: number; commands: number; lastCommand?: DisruptionStatus['lastCommand'] };
}

const activities = (queue: string) =>
  proxyActivities<DisruptionActivities>({
    taskQueue: queue,
    startToCloseTimeout: '2 minutes',
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
  const pollMs = durationToMs(input.pollInterval ?? '10s') ?? 10_000;
  const validationMs = durationToMs(input.validationDelay ?? '15s') ?? 15_000;
  const commandTimeoutMs = durationToMs(input.commandTimeout ?? '10m') ?? 600_000;
  const batchMaxMs = durationToMs(input.batchMax ?? '10s') ?? 10_000;

  let memory: PodEventMemory = input.carried?.memory ?? {};
  let now = false;
  const status: DisruptionStatus = { cluster: cluster.name, rounds: input.carried?.rounds ?? 0, commands: input.carried?.commands ?? 0, blocked: [], ...(input.carried?.lastCommand ? { lastCommand: input.carried.lastCommand } : {}) };
  setHandler(disruptionStatusQuery, () => status);
  setHandler(disruptNowSignal, () => void (now = true));
  upsertSearchAttributes([
    { key: AutoNodeCluster, value: cluster.name },
    { key: AutoNodePhase, value: 'Disrupting' },
  ]);
  const stamp = () => new Date().toISOString();

  for (;;) {
    const round = await act.planRound({ cluster, memory, batchMaxMs });
    memory = round.memory;
    status.rounds++;
    status.lastRound = { at: stamp(), nodes: round.nodes, considered: round.considered };
    status.blocked = round.blocked;
    const command = round.command;
    if (command) {
      status.inFlight = { command, step: 'validating', since: stamp() };
      await sleep(validationMs);
      const valid = await act.validateCommand({ cluster, command, memory, batchMaxMs });
      if (!valid.ok) {
        status.lastCommand = { command, outcome: 'abandoned', why: valid.reason, at: stamp() };
      } else {
        status.inFlight = { command, step: 'tainting', since: stamp() };
        await act.startCommand({ cluster, command });
        status.inFlight = { command, step: 'deleting', since: stamp() };
        await act.deleteCandidates({ cluster, command });
        status.inFlight = { command, step: 'waiting for the nodes to go', since: stamp() };
        const deadline = Date.now() + commandTimeoutMs;
        let left = await act.commandNodesLeft({ cluster, command });
        while (left.length > 0 && Date.now() < deadline) {
          await sleep('2 seconds');
          left = await act.commandNodesLeft({ cluster, command });
        }
        status.commands++;
        status.lastCommand = { command, outcome: 'done', ...(left.length > 0 ? { why: `still draining after ${input.commandTimeout ?? '10m'}: ${left.join(', ')}` } : {}), at: stamp() };
      }
      delete status.inFlight;
    } else {
      now = false;
      await condition(() => now, pollMs);
    }
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > 2_000) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof disruptionWorkflow>({ ...input, carried: { memory, rounds: status.rounds, commands: status.commands, ...(status.lastCommand ? { lastCommand: status.lastCommand } : {}) } });
    }
  }
}
