// Shared pieces of the enablement integration tests: EC2 as a HostedCluster's role sees it,
// a NodePool with a workload only it can run, and whether a workflow is running.
import { AppsV1Api } from '@kubernetes/client-node';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { createAssumeRoleCredentialsFactory, createEc2ClientFactory, createStsClientFactory, staticCredentialsProvider } from '../../activities/cloud';
import { HOSTED_CLUSTERS } from '../../activities/enablement/activity';
import { type KubeClients } from '../../activities/kube/clients';
import { type StackInfo } from '../../dev/stack/types';

/** EC2 clients per ClusterRef, through STS AssumeRole on moto (as the workers do). */
export function roleEc2ClientFactory(stack: StackInfo) {
  return createEc2ClientFactory({
    endpoint: stack.ec2.endpoint,
    credentialsFor: createAssumeRoleCredentialsFactory({
      stsFor: createStsClientFactory({ endpoint: stack.ec2.endpoint, endpointPolicy: 'loopback-only', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } }),
      withoutRole: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
    }),
    endpointPolicy: 'loopback-only',
  });
}

export interface StoredHostedCluster {
  metadata: { finalizers?: string[]; deletionTimestamp?: string };
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[]; autoNode?: { nodeCount: number; nodeClaimCount: number; vCPUs: number } | null };
}

export async function readHostedCluster(management: KubeClients, hc: { namespace: string; name: string }): Promise<StoredHostedCluster | undefined> {
  try {
    return (await management.customObjects.getNamespacedCustomObject({ ...HOSTED_CLUSTERS, namespace: hc.namespace, name: hc.name })) as StoredHostedCluster;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

export const conditionOf = (hc: StoredHostedCluster | undefined, type: string) => hc?.status?.conditions?.find((c) => c.type === type);

export async function workflowStatus(client: Client, workflowId: string): Promise<string | undefined> {
  try {
    return (await client.workflow.getHandle(workflowId).describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** Running workflows of one cluster (its watch, provisioner and nodeclaim workflows carry AutoNodeCluster = infraID). */
export async function runningWorkflowsOf(client: Client, infraID: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query: `AutoNodeCluster = '${infraID}' AND ExecutionStatus = 'Running'` })) ids.push(wf.workflowId);
  return ids;
}

/**
 * A NodePool only this test's pods tolerate (m5.large/xlarge on-demand, on `className`), and a
 * Deployment of `replicas` × 500m (or `cpu`) for it in a namespace of its own; m5.large/xlarge unless `types`.
 */
export async function aPoolWithWorkload(guest: KubeClients, o: { pool: string; className: string; taint: string; namespace: string; replicas: number; types?: string[]; cpu?: string }): Promise<void> {
  await guest.customObjects.createClusterCustomObject({
    group: 'karpenter.sh',
    version: 'v1',
    plural: 'nodepools',
    body: {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: o.pool },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: o.className },
            requirements: [
              { key: 'node.kubernetes.io/instance-type', operator: 'In', values: o.types ?? ['m5.large', 'm5.xlarge'] },
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            ],
            taints: [{ key: 'autonode.io/test', value: o.taint, effect: 'NoSchedule' }],
            expireAfter: 'Never',
          },
        },
      },
    },
  });
  await guest.core.createNamespace({ body: { metadata: { name: o.namespace } } });
  await guest.config.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace: o.namespace,
    body: {
      metadata: { name: 'app' },
      spec: {
        replicas: o.replicas,
        selector: { matchLabels: { app: 'app' } },
        template: {
          metadata: { labels: { app: 'app' } },
          spec: {
            nodeSelector: { 'karpenter.sh/nodepool': o.pool },
            tolerations: [{ key: 'autonode.io/test', operator: 'Equal', value: o.taint, effect: 'NoSchedule' }],
            containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: o.cpu ?? '500m', memory: '512Mi' } } }],
          },
        },
      },
    },
  });
}

export async function allPodsRunning(guest: KubeClients, namespace: string, replicas: number): Promise<boolean> {
  const pods = (await guest.core.listNamespacedPod({ namespace })).items.filter((p) => p.metadata?.deletionTimestamp === undefined);
  return pods.length === replicas && pods.every((p) => p.status?.phase === 'Running');
}
