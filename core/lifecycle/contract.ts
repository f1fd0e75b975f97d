import { z } from 'zod';
import { type EndReason } from './end';
import { type OfferingRef } from './failures';

/**
 * The contract between the nodeclaim workflow, its activities and whoever starts or
 * signals it. Plain JSON only: it is workflow input, payloads and history. No credential
 * ever appears here — a ClusterRef names where activities find them.
 */
export const ClusterRefSchema = z.object({
  /** infra ID: the `kubernetes.io/cluster/<name>` tag and the workflow-id prefix */
  name: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a DNS-1123 name'),
  region: z.string().min(1),
  /** Secret in the management cluster holding the guest kubeconfig (production) */
  kubeconfigSecret: z.object({ namespace: z.string(), name: z.string(), key: z.string().default('kubeconfig') }).optional(),
  /** resolved by the cloud credentials provider, e.g. a role ARN; never a secret itself */
  credentialsRef: z.string().optional(),
});
export type ClusterRef = z.infer<typeof ClusterRefSchema>;

export const LifecycleTimeoutsSchema = z.object({
  launch: z.string().default('5m'),
  /** one launch attempt at most (a slow attempt is given up after this, and its signal aborts it) */
  launchAttempt: z.string().default('1m'),
  /** a launch attempt heartbeats every 5 s: a worker that died mid-launch is noticed after this */
  launchHeartbeat: z.string().default('20s'),
  registration: z.string().default('15m'),
  /**
   * A registered node whose Ready condition stays False or Unknown this long is replaced:
   * Karpenter's node-repair toleration for Ready. A Ready node still held by a startup
   * taint is waited for indefinitely, as Karpenter does (history stays bounded regardless).
   */
  initialization: z.string().default('30m'),
  /** how often a waiting workflow re-reads the world without being signalled */
  resync: z.string().default('15s'),
  /** steady-state re-check (drift of the objects, missed deletions) */
  steadyResync: z.string().default('5m'),
});
export type LifecycleTimeouts = z.infer<typeof LifecycleTimeoutsSchema>;

export const CsrPolicySchema = z.object({
  bootstrapperUsernames: z.array(z.string()).default(['system:serviceaccount:openshift-machine-config-operator:node-bootstrapper']),
  bootstrapperGroups: z.array(z.string()).default([]),
});
export type CsrPolicyConfig = z.infer<typeof CsrPolicySchema>;

export const LaunchedInstanceSchema = z.object({
  providerId: z.string(),
  instanceId: z.string(),
  instanceType: z.string(),
  zone: z.string(),
  capacityType: z.enum(['spot', 'on-demand']),
  imageId: z.string(),
  privateDnsName: z.string(),
  privateIpAddresses: z.array(z.string()),
  launchTime: z.string(),
});
export type LaunchedInstance = z.infer<typeof LaunchedInstanceSchema>;

/**
 * What the launch activity returns: the instance, plus the offerings the fleet reported out
 * of capacity on the way to it (a partial fleet error), for the provisioner's memory. Flat
 * and optional rather than `{ instance, exhausted }`: results recorded before the field
 * existed are a bare LaunchedInstance and must read as "none reported". Absent when none.
 */
export type LaunchOutcome = LaunchedInstance & { exhaustedOfferings?: OfferingRef[] };

export const PHASES = ['Pending', 'Launching', 'Launched', 'Registered', 'Initialized', 'Draining', 'Terminating', 'Terminated'] as const;
export type Phase = (typeof PHASES)[number];

/**
 * Task queues a deployment's workers poll (ARCHITECTURE.md). Overridable so two
 * deployments, or parallel test suites, can share one Temporal namespace without taking
 * each other's tasks.
 */
export const TaskQueuesSchema = z.object({
  control: z.string().min(1).default('autonode-control'),
  cloud: z.string().min(1).default('autonode-cloud'),
  /** the provisioner's packing activity (CPU-heavy: its own workers) */
  packing: z.string().min(1).default('autonode-packing'),
});
export type TaskQueues = z.output<typeof TaskQueuesSchema>;
export const defaultTaskQueues: TaskQueues = TaskQueuesSchema.parse({});

export const NodeClaimWorkflowInputSchema = z.object({
  cluster: ClusterRefSchema,
  taskQueues: TaskQueuesSchema.default(defaultTaskQueues),
  nodeClaim: z.object({ name: z.string(), uid: z.string() }),
  timeouts: LifecycleTimeoutsSchema.default(LifecycleTimeoutsSchema.parse({})),
  csrPolicy: CsrPolicySchema.default(CsrPolicySchema.parse({})),
  /**
   * A run continues as new once its history holds this many events, even when the server
   * does not suggest it (Temporal warns at 10,240 and stops at 51,200): every wait of the
   * lifecycle, however long, stays bounded in history.
   */
  maxHistoryEvents: z.number().int().min(50).default(5_000),
});
export type NodeClaimWorkflowInput = z.input<typeof NodeClaimWorkflowInputSchema>;
export type NodeClaimWorkflowConfig = z.output<typeof NodeClaimWorkflowInputSchema>;

/** What the `status` query answers. */
export interface NodeClaimStatusView {
  phase: Phase;
  nodeClaim: string;
  instance?: LaunchedInstance;
  nodeName?: string;
  timings: Partial<Record<Phase, string>>;
  lastError?: string;
  ending?: EndReason;
}

/** The workflow's result: how this node's life ended. */
export interface NodeClaimResult {
  nodeClaim: string;
  end: EndReason;
  instance?: LaunchedInstance;
}

export const nodeClaimWorkflowId = (cluster: string, name: string) => `autonode/${cluster}/nodeclaim/${name}`;
export const provisionerWorkflowId = (cluster: string) => `autonode/${cluster}/provisioner`;
export const watchWorkflowId = (cluster: string) => `autonode/${cluster}/watch`;
export const disruptionWorkflowId = (cluster: string) => `autonode/${cluster}/disruption`;
/** runs only for a cluster that names an interruption queue */
export const interruptionWorkflowId = (cluster: string) => `autonode/${cluster}/interruption`;
/** one per HostedCluster: `autonode/<namespace>/<name>` */
export const enablementWorkflowId = (hc: { namespace: string; name: string }) => `autonode/${hc.namespace}/${hc.name}`;

/** What a workflow id above names: logs carry the cluster and NodeClaim without every call site saying so. */
export type WorkflowIdentity =
  | { kind: 'nodeclaim'; cluster: string; nodeClaim: string }
  | { kind: 'provisioner' | 'watch' | 'disruption' | 'interruption'; cluster: string }
  | { kind: 'management-watch' }
  | { kind: 'enablement'; hostedCluster: { namespace: string; name: string } }
  | { kind: 'other' };

/**
 * The inverse of the id builders. Names contain no '/', so the shape decides; the one
 * ambiguity is core/enablement's management watch (`autonode/management/watch`), which a
 * cluster named `management` would share anyway, and `autonode/<ns>/<name>` of a
 * HostedCluster named like a cluster workflow, read as that workflow.
 */
export function workflowIdentity(workflowId: string): WorkflowIdentity {
  const parts = workflowId.split('/');
  if (parts[0] !== 'autonode' || parts.some((p) => p === '')) return { kind: 'other' };
  const [, first, second, third] = parts;
  if (parts.length === 4 && second === 'nodeclaim' && first && third) return { kind: 'nodeclaim', cluster: first, nodeClaim: third };
  if (parts.length !== 3 || !first || !second) return { kind: 'other' };
  if (first === 'management' && second === 'watch') return { kind: 'management-watch' };
  if (second === 'provisioner' || second === 'watch' || second === 'disruption' || second === 'interruption') return { kind: second, cluster: first };
  return { kind: 'enablement', hostedCluster: { namespace: first, name: second } };
}

/** Signals carry names only, never objects: the workflow re-reads what it needs. */
export const signalNames = {
  nodeClaimChanged: 'nodeClaimChanged',
  nodeChanged: 'nodeChanged',
  csrCreated: 'csrCreated',
} as const;

/** Annotation holding the node name the instance will register as (its private DNS name). */
export const EXPECTED_NODE_NAME_ANNOTATION = 'autonode.io/node-name';
export const TERMINATION_FINALIZER = 'karpenter.sh/termination';
