// ADR 0008: each workflow type says how it meets a new build. A workflow added without a
// decision would take the workers' default; this table makes the decision explicit.
import * as workflows from '../../workflows';

const decided: Record<string, 'PINNED' | 'AUTO_UPGRADE'> = {
  nodeClaimWorkflow: 'PINNED',
  watchWorkflow: 'AUTO_UPGRADE',
  provisionerWorkflow: 'AUTO_UPGRADE',
  enablementWorkflow: 'AUTO_UPGRADE',
  disruptionWorkflow: 'AUTO_UPGRADE',
  managementWatchWorkflow: 'AUTO_UPGRADE',
};

describe('worker versioning behaviour of every workflow type (ADR 0008)', () => {
  const registered = Object.entries(workflows).filter(([, value]) => typeof value === 'function');

  it('every registered workflow type has a decision in the ADR', () => {
    expect(registered.map(([name]) => name).sort()).toEqual(Object.keys(decided).sort());
  });

  it.each(registered)('%s declares the behaviour the ADR decided', (name, fn) => {
    const declared = (fn as { workflowDefinitionOptions?: { versioningBehavior?: string } }).workflowDefinitionOptions?.versioningBehavior;
    expect(declared).toBe(decided[name]);
  });
});
