import {
  AUTONODE_PROBLEM_REASONS,
  clusterRefOf,
  invalidAutoNodeCondition,
  validateAutoNode,
  type AutoNodeProblem,
  type AutoNodeProblemReason,
  type AutoNodeValidation,
} from '../../../core/hostedcluster';
import { ClusterRefSchema } from '../../../core/lifecycle';
import { INTERRUPTION_QUEUE_ANNOTATION } from '../../../core/hostedcluster';
import { aHostedCluster, DEFAULTS, withRoleArn, type HostedClusterManifest } from './builders';

const withInterruptionQueue = (queue: string) => (hc: HostedClusterManifest) => {
  hc.metadata['annotations'] = { [INTERRUPTION_QUEUE_ANNOTATION]: queue };
};

/** The problems of an invalid validation; fails at the caller's line otherwise. */
function problemsOf(result: AutoNodeValidation): AutoNodeProblem[] {
  if (result.status !== 'invalid') throw new Error(`expected problems, got ${JSON.stringify(result)}`);
  return result.problems;
}

// metav1.Condition's reason pattern (what the API server enforces on status.conditions)
const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

describe('validateAutoNode', () => {
  it('reads what autonode acts on from a valid HostedCluster', () => {
    const result = validateAutoNode(aHostedCluster());
    expect(result).toEqual({
      status: 'ok',
      config: {
        namespace: DEFAULTS.namespace,
        name: DEFAULTS.name,
        infraID: DEFAULTS.infraID,
        region: DEFAULTS.region,
        roleARN: DEFAULTS.roleARN,
        role: { partition: 'aws', accountId: '210987654321', path: '/hypershift/', name: 'autonode-team-a' },
        releaseImage: DEFAULTS.releaseImage,
        generation: 3,
      },
    });
  });

  it('says a HostedCluster without spec.autoNode does not ask for AutoNode (not a problem)', () => {
    const result = validateAutoNode(aHostedCluster((hc) => delete hc.spec.autoNode));
    expect(result).toEqual({ status: 'notConfigured', namespace: DEFAULTS.namespace, name: DEFAULTS.name });
  });

  it('ignores the many HyperShift fields it does not read', () => {
    const result = validateAutoNode(
      aHostedCluster((hc) => {
        hc.spec['networking'] = { networkType: 'OVNKubernetes', clusterNetwork: [{ cidr: '10.132.0.0/14' }] };
        hc.spec['pullSecret'] = { name: 'pull-secret' };
        hc.spec.platform = { type: 'AWS', aws: { region: 'us-east-2', rolesRef: { nodePoolManagementARN: 'arn:aws:iam::1:role/x' } } };
        hc.status = { version: { history: [] }, kubeconfig: { name: 'team-a-admin-kubeconfig' } };
      }),
    );
    expect(result).toEqual(expect.objectContaining({ status: 'ok', config: expect.objectContaining({ region: 'us-east-2' }) }));
  });

  // One row per reason: the change that provokes it, and the field it must name.
  const cases: [AutoNodeProblemReason, string, (hc: HostedClusterManifest) => void][] = [
    ['InvalidHostedCluster', 'metadata.namespace', (hc) => { hc.metadata = { name: 'x' } as HostedClusterManifest['metadata']; }],
    ['MissingInfraID', 'spec.infraID', (hc) => delete hc.spec.infraID],
    ['InvalidInfraID', 'spec.infraID', (hc) => { hc.spec.infraID = 'Team_A'; }],
    ['UnsupportedPlatform', 'spec.platform.type', (hc) => { hc.spec.platform = { type: 'Azure', azure: {} }; }],
    ['MissingRegion', 'spec.platform.aws.region', (hc) => { hc.spec.platform = { type: 'AWS' }; }],
    ['InvalidRegion', 'spec.platform.aws.region', (hc) => { hc.spec.platform = { type: 'AWS', aws: { region: 'US East' } }; }],
    ['MissingReleaseImage', 'spec.release.image', (hc) => { hc.spec.release = { image: '' }; }],
    ['InvalidReleaseImage', 'spec.release.image', (hc) => { hc.spec.release = { image: ' quay.io/ocp release' }; }],
    ['UnsupportedProvisioner', 'spec.autoNode.provisionerConfig.name', (hc) => { hc.spec.autoNode!.provisionerConfig!.name = 'ClusterAutoscaler'; }],
    ['MissingKarpenterConfig', 'spec.autoNode.provisionerConfig.karpenter', (hc) => { hc.spec.autoNode = { provisionerConfig: { name: 'Karpenter' } }; }],
    ['UnsupportedPlatform', 'spec.autoNode.provisionerConfig.karpenter.platform', (hc) => { hc.spec.autoNode!.provisionerConfig!.karpenter!.platform = 'GCP'; }],
    ['MissingRoleARN', 'spec.autoNode.provisionerConfig.karpenter.aws.roleARN', (hc) => { hc.spec.autoNode!.provisionerConfig!.karpenter = { platform: 'AWS' }; }],
    ['InvalidRoleARN', 'spec.autoNode.provisionerConfig.karpenter.aws.roleARN', withRoleArn('arn:aws:iam::12345:role/autonode')],
    ['InvalidRoleARN', 'spec.autoNode.provisionerConfig.karpenter.aws.roleARN', withRoleArn(42)],
    ['RoleARNPartitionMismatch', 'spec.autoNode.provisionerConfig.karpenter.aws.roleARN', withRoleArn('arn:aws-cn:iam::123456789012:role/autonode')],
    ['InvalidInterruptionQueue', `metadata.annotations["${INTERRUPTION_QUEUE_ANNOTATION}"]`, withInterruptionQueue('https://sqs.eu-west-1.amazonaws.com/210987654321/team-a')],
  ];

  it.each(cases)('%s at %s', (reason, field, change) => {
    const problems = problemsOf(validateAutoNode(aHostedCluster(change)));
    expect(problems.map((p) => [p.field, p.reason])).toEqual([[field, reason]]);
    expect(problems[0]!.message.length).toBeGreaterThan(20);
  });

  it('has a row above for every reason it can give', () => {
    expect(new Set(cases.map(([reason]) => reason))).toEqual(new Set(AUTONODE_PROBLEM_REASONS));
  });

  it.each(AUTONODE_PROBLEM_REASONS)('%s is a valid Kubernetes condition reason', (reason) => {
    expect(reason).toMatch(CONDITION_REASON);
  });

  it('reads the interruption queue the annotation names (standard or FIFO), and none without it', () => {
    const queueOf = (result: AutoNodeValidation) => (result.status === 'ok' ? result.config.interruptionQueue : `not ok: ${result.status}`);
    expect(queueOf(validateAutoNode(aHostedCluster(withInterruptionQueue('team-a_interruption-1'))))).toBe('team-a_interruption-1');
    expect(queueOf(validateAutoNode(aHostedCluster(withInterruptionQueue('team-a.fifo'))))).toBe('team-a.fifo');
    expect(queueOf(validateAutoNode(aHostedCluster()))).toBeUndefined();
    expect(problemsOf(validateAutoNode(aHostedCluster(withInterruptionQueue('q'.repeat(81))))).map((p) => p.reason)).toEqual(['InvalidInterruptionQueue']);
  });

  it('says what is wrong with a malformed role ARN and what to set', () => {
    const [problem] = problemsOf(validateAutoNode(aHostedCluster(withRoleArn('arn:aws:iam::210987654321:user/autonode'))));
    expect(problem!.message).toContain('"arn:aws:iam::210987654321:user/autonode"');
    expect(problem!.message).toContain('not a role');
    expect(problem!.message).toContain('arn:aws:iam::123456789012:role/');
  });

  it('accepts the GovCloud and China partitions in their own regions', () => {
    const gov = validateAutoNode(aHostedCluster((hc) => {
      hc.spec.platform = { type: 'AWS', aws: { region: 'us-gov-west-1' } };
      withRoleArn('arn:aws-us-gov:iam::123456789012:role/autonode')(hc);
    }));
    const china = validateAutoNode(aHostedCluster((hc) => {
      hc.spec.platform = { type: 'AWS', aws: { region: 'cn-north-1' } };
      withRoleArn('arn:aws-cn:iam::123456789012:role/autonode')(hc);
    }));
    expect([gov.status, china.status]).toEqual(['ok', 'ok']);
  });

  it('reports every problem at once, in field order', () => {
    const problems = problemsOf(
      validateAutoNode(
        aHostedCluster((hc) => {
          delete hc.spec.infraID;
          hc.spec.platform = { type: 'AWS', aws: { region: '' } };
          withRoleArn('role/autonode')(hc);
        }),
      ),
    );
    expect(problems.map((p) => p.reason)).toEqual(['MissingInfraID', 'MissingRegion', 'InvalidRoleARN']);
  });

  it('does not pile region problems on a cluster of another platform', () => {
    const problems = problemsOf(validateAutoNode(aHostedCluster((hc) => { hc.spec.platform = { type: 'KubeVirt' }; })));
    expect(problems.map((p) => p.reason)).toEqual(['UnsupportedPlatform']);
  });

  it('rejects what is not an object', () => {
    expect(problemsOf(validateAutoNode('HostedCluster')).map((p) => p.reason)).toEqual(['InvalidHostedCluster']);
  });
});

describe('invalidAutoNodeCondition', () => {
  it('is AutoNodeEnabled=False with the first reason and every problem in the message', () => {
    const problems = problemsOf(validateAutoNode(aHostedCluster((hc) => {
      hc.spec.platform = { type: 'AWS' };
      withRoleArn('nope')(hc);
    })));
    const condition = invalidAutoNodeCondition(problems);
    expect(condition).toEqual({ type: 'AutoNodeEnabled', status: 'False', reason: 'MissingRegion', message: expect.any(String) });
    expect(condition.message).toContain('spec.platform.aws.region: ');
    expect(condition.message).toContain('spec.autoNode.provisionerConfig.karpenter.aws.roleARN: ');
  });
});

describe('clusterRefOf', () => {
  it('names the cluster by infraID and refers to its role, as a workflow may carry it', () => {
    const result = validateAutoNode(aHostedCluster());
    if (result.status !== 'ok') throw new Error(JSON.stringify(result));
    const ref = clusterRefOf(result.config, { namespace: 'clusters', name: 'team-a-autonode-kubeconfig', key: 'kubeconfig' });
    expect(ClusterRefSchema.parse(ref)).toEqual({
      name: DEFAULTS.infraID,
      region: DEFAULTS.region,
      credentialsRef: DEFAULTS.roleARN,
      kubeconfigSecret: { namespace: 'clusters', name: 'team-a-autonode-kubeconfig', key: 'kubeconfig' },
    });
  });
});
