// Issue 13, test 5: no secret in any workflow history. The scan is proved able to fail on a
// workflow started here with a secret in its input (then deleted); it then scans every
// history the run has produced so far. The integration global teardown runs the same scan
// once more after the last file, so the whole run is covered whatever the file order.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PLANTED_SECRET_PREFIX, describeFindings, knownSecrets, scanHistories, type KnownSecret } from '../support/history-secrets';
import { eventually } from '../support/eventually';
import { loadStackInfo } from '../support/stack';
import { temporalHarness, type TemporalHarness } from '../support/temporal';

jest.setTimeout(300_000);

describe('no secret in any workflow history (real Temporal of the run)', () => {
  const stack = loadStackInfo();
  let t: TemporalHarness;
  let known: KnownSecret[];
  beforeAll(async () => {
    t = await temporalHarness();
    known = await knownSecrets(stack);
  });
  afterAll(async () => t?.close());

  it('knows the run’s secrets: the stack’s kubeconfig keys', () => {
    expect(known.some((s) => s.label.includes(stack.guest.kubeconfigPath) && s.label.includes('client key'))).toBe(true);
  });

  it.each([
    ['the guest admin kubeconfig', () => ({ kubeconfig: readFileSync(stack.guest.kubeconfigPath, 'utf8') }), /client key of admin/],
    ['a service-account token', () => ({ token: ['eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ', 'eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a3ViZS1zeXN0ZW06YXV0b25vZGUifQ', 'c2lnbmF0dXJlLXNpZ25hdHVyZQ'].join('.') }), /JSON Web Token/],
    ['assumed-role credentials', () => ({ credentials: { accessKeyId: 'ASIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' } }), /AWS access key id/],
  ])('finds %s planted in a workflow input', async (_, payload, what) => {
    const workflowId = `${PLANTED_SECRET_PREFIX}${randomUUID().slice(0, 8)}`;
    // a task queue nobody polls: the start alone records the input in history
    const handle = await t.client.workflow.start('plantedSecretWorkflow', { taskQueue: `autonode-test-nobody-${randomUUID().slice(0, 8)}`, workflowId, args: [payload()] });
    try {
      // visibility lists a new run a moment after its start
      const scan = await eventually('the planted run listed', async () => {
        const s = await scanHistories(t.client, known, { query: `WorkflowId = '${workflowId}'` });
        return s.runs > 0 ? s : undefined;
      }, 30_000);
      expect(scan.runs).toBe(1);
      expect(scan.findings.map((f) => f.what)).toEqual(expect.arrayContaining([expect.stringMatching(what)]));
    } finally {
      await handle.terminate('planted secret found');
      await t.client.workflowService.deleteWorkflowExecution({ namespace: t.namespace, workflowExecution: { workflowId, runId: handle.firstExecutionRunId } });
    }
  });

  it('every history of the run so far is free of secrets', async () => {
    const scan = await scanHistories(t.client, known, { exclude: (id) => id.startsWith(PLANTED_SECRET_PREFIX) });
    console.log(`history scan: ${scan.runs} workflow runs, ${scan.events} events, ${known.length} known secret forms, ${scan.findings.length} findings`);
    expect(describeFindings(scan.findings)).toBe('');
  });
});
