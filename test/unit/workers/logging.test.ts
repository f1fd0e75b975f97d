// The worker's JSON logs: every Temporal line carries the cluster, NodeClaim, workflow and
// run it is about, and no secret.
import { workflowIdentity, nodeClaimWorkflowId, provisionerWorkflowId, enablementWorkflowId, type WorkflowIdentity } from '../../../core/lifecycle';
import { MANAGEMENT_WATCH_WORKFLOW_ID } from '../../../core/enablement/management-watch';
import { type LogLevel } from '@temporalio/common';
import { createWorkerLogger, logFields, temporalLogger, type WorkerLogLevel } from '../../../workers/logging';

describe('workflowIdentity: the id builders, read back', () => {
  it.each<[string, WorkflowIdentity]>([
    [nodeClaimWorkflowId('infra-1', 'default-abc12'), { kind: 'nodeclaim', cluster: 'infra-1', nodeClaim: 'default-abc12' }],
    [provisionerWorkflowId('infra-1'), { kind: 'provisioner', cluster: 'infra-1' }],
    ['autonode/infra-1/watch', { kind: 'watch', cluster: 'infra-1' }],
    ['autonode/infra-1/disruption', { kind: 'disruption', cluster: 'infra-1' }],
    [enablementWorkflowId({ namespace: 'clusters', name: 'example' }), { kind: 'enablement', hostedCluster: { namespace: 'clusters', name: 'example' } }],
    [MANAGEMENT_WATCH_WORKFLOW_ID, { kind: 'management-watch' }],
    ['ts-1', { kind: 'other' }],
    ['autonode//watch', { kind: 'other' }],
    ['autonode/a/b/c/d', { kind: 'other' }],
  ])('%s', (id, identity) => {
    expect(workflowIdentity(id)).toEqual(identity);
  });
});

describe('logFields', () => {
  const activityMeta = {
    isLocal: false,
    attempt: 2,
    namespace: 'autonode',
    taskToken: 'c2VjcmV0LXRhc2stdG9rZW4=',
    activityId: '7',
    activityType: 'launchClaimInstance',
    taskQueue: 'autonode-cloud',
    workflowId: 'autonode/infra-1/nodeclaim/default-abc12',
    workflowRunId: 'run-1',
    workflowType: 'nodeClaimWorkflow',
    sdkComponent: 'activity',
  };

  it('names an activity line\'s cluster, NodeClaim and run, and drops the task token', () => {
    expect(logFields(activityMeta)).toEqual({
      isLocal: false,
      attempt: 2,
      namespace: 'autonode',
      activityId: '7',
      activityType: 'launchClaimInstance',
      taskQueue: 'autonode-cloud',
      workflowId: 'autonode/infra-1/nodeclaim/default-abc12',
      runId: 'run-1',
      workflowType: 'nodeClaimWorkflow',
      sdkComponent: 'activity',
      cluster: 'infra-1',
      nodeclaim: 'default-abc12',
    });
  });

  it.each([
    ['a workflow line (the SDK says runId)', { workflowId: 'autonode/infra-1/provisioner', runId: 'run-2', workflowType: 'provisionerWorkflow' }, { workflowId: 'autonode/infra-1/provisioner', runId: 'run-2', workflowType: 'provisionerWorkflow', cluster: 'infra-1' }],
    ['an enablement line', { workflowId: 'autonode/clusters/example', runId: 'r' }, { workflowId: 'autonode/clusters/example', runId: 'r', hostedCluster: 'clusters/example' }],
    ['a line that names its own cluster and claim (the provisioner creating one)', { workflowId: 'autonode/infra-1/provisioner', cluster: 'infra-1', nodeclaim: 'pool-x1' }, { workflowId: 'autonode/infra-1/provisioner', cluster: 'infra-1', nodeclaim: 'pool-x1' }],
    ['a worker line', { sdkComponent: 'worker', taskQueue: 'q' }, { sdkComponent: 'worker', taskQueue: 'q' }],
    ['no metadata', undefined, {}],
  ])('%s', (_what, meta, fields) => {
    expect(logFields(meta)).toEqual(fields);
  });

  it('puts an error where pino serialises it', () => {
    const error = new Error('boom');
    expect(logFields({ error })).toEqual({ err: error });
  });
});

describe('the worker logger', () => {
  function capture(level: WorkerLogLevel = 'info') {
    const lines: string[] = [];
    const logger = createWorkerLogger({ level, destination: { write: (line: string) => void lines.push(line) } });
    return { logger, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
  }

  it('writes one JSON object per line: ISO time, level as a word, the message, the fields', () => {
    const { logger, records } = capture();
    temporalLogger(logger).info('instance launched', { cluster: 'infra-1', nodeclaim: 'default-abc12', workflowId: 'autonode/infra-1/nodeclaim/default-abc12', workflowRunId: 'run-1', taskToken: 'dG9rZW4=' });
    const [record] = records();
    expect(record).toEqual({
      level: 'info',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      service: 'autonode-worker',
      msg: 'instance launched',
      cluster: 'infra-1',
      nodeclaim: 'default-abc12',
      workflowId: 'autonode/infra-1/nodeclaim/default-abc12',
      runId: 'run-1',
    });
  });

  it.each<[LogLevel, (l: ReturnType<typeof temporalLogger>) => void]>([
    ['TRACE', (l) => l.trace('x')],
    ['DEBUG', (l) => l.debug('x')],
    ['INFO', (l) => l.info('x')],
    ['WARN', (l) => l.warn('x')],
    ['ERROR', (l) => l.error('x')],
  ])('maps Temporal\'s %s and filters below the level', (level, write) => {
    const { logger, records } = capture('info');
    write(temporalLogger(logger));
    temporalLogger(logger).log(level, 'y');
    const expected = { TRACE: [], DEBUG: [], INFO: ['info', 'info'], WARN: ['warn', 'warn'], ERROR: ['error', 'error'] }[level];
    expect(records().map((r) => r.level)).toEqual(expected);
  });

  it('redacts secrets wherever a caller put them by mistake', () => {
    const { logger, records } = capture();
    temporalLogger(logger).warn('assumed role', { cluster: 'c1', credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI', sessionToken: 'FwoGZX' }, token: 'eyJhbGci' });
    const [record] = records();
    expect(record?.credentials).toEqual({ accessKeyId: 'AKIAEXAMPLE', secretAccessKey: '[redacted]', sessionToken: '[redacted]' });
    expect(record?.token).toBe('[redacted]');
    expect(JSON.stringify(record)).not.toMatch(/wJalrXUtnFEMI|FwoGZX|eyJhbGci/);
  });

  it('serialises an error with its type, message and stack', () => {
    const { logger, records } = capture();
    temporalLogger(logger).error('activity failed', { error: new TypeError('bad input') });
    expect(records()[0]?.err).toEqual(expect.objectContaining({ type: 'TypeError', message: 'bad input', stack: expect.stringContaining('TypeError: bad input') }));
  });
});
