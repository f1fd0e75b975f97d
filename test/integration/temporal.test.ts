import { randomUUID } from 'node:crypto';
import { temporalHarness, workflowBundle, Worker, type TemporalHarness } from '../support/temporal';

describe('Temporal dev server (real)', () => {
  let h: TemporalHarness;
  beforeAll(async () => {
    h = await temporalHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('runs a workflow that calls an activity, answers a query and is findable by search attribute', async () => {
    const taskQueue = `smoke-${randomUUID()}`;
    const cluster = `cluster-${randomUUID().slice(0, 8)}`;
    const worker = await Worker.create({
      connection: h.connection,
      namespace: h.namespace,
      taskQueue,
      workflowBundle: workflowBundle(),
      activities: { greet: async (name: string) => `hello, ${name}` },
    });

    const result = await worker.runUntil(async () => {
      const handle = await h.client.workflow.start('smokeWorkflow', {
        taskQueue,
        workflowId: `autonode/${cluster}/smoke`,
        args: [{ cluster, name: 'autonode' }],
      });
      const greeting = await handle.result();
      expect(await handle.query<string>('phase')).toBe('Done');
      return greeting;
    });
    expect(result).toBe('hello, autonode');

    // Visibility is eventually consistent even on the dev server: poll briefly.
    let found: string[] = [];
    for (let i = 0; i < 50 && found.length === 0; i++) {
      found = [];
      for await (const wf of h.client.workflow.list({ query: `AutoNodeCluster = "${cluster}" AND AutoNodePhase = "Done"` })) {
        found.push(wf.workflowId);
      }
      if (found.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    expect(found).toEqual([`autonode/${cluster}/smoke`]);
  });
});
