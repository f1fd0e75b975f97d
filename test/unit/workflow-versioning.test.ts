// ADR 0009: each workflow type says how it meets a new build. A workflow added without a
// decision would take the workers' default; this table makes the decision explicit.
import * as workflows from '../../workflows';
import { declaredVersioningBehaviors, versioningOptionsFor } from '../../workflows/versioning';

const decided: Record<string, 'PINNED' | 'AUTO_UPGRADE'> = {
  nodeClaimWorkflow: 'PINNED',
  watchWorkflow: 'AUTO_UPGRADE',
  provisionerWorkflow: 'AUTO_UPGRADE',
  enablementWorkflow: 'AUTO_UPGRADE',
  disruptionWorkflow: 'AUTO_UPGRADE',
  interruptionWorkflow: 'AUTO_UPGRADE',
  managementWatchWorkflow: 'AUTO_UPGRADE',
};

describe('worker versioning behaviour of every workflow type (ADR 0009)', () => {
  const registered = Object.entries(workflows).filter(([, value]) => typeof value === 'function').map(([name]) => name);

  it('every registered workflow type has a decision in the ADR', () => {
    expect(registered.sort()).toEqual(Object.keys(decided).sort());
  });

  it.each(registered)('%s declares the behaviour the ADR decided', (name) => {
    expect(declaredVersioningBehaviors.get(name)).toBe(decided[name]);
  });

  it('a run reports its behaviour on a versioned worker only (Temporal refuses it from an unversioned one)', () => {
    expect(versioningOptionsFor('PINNED', { deploymentName: 'autonode' })).toEqual({ versioningBehavior: 'PINNED' });
    expect(versioningOptionsFor('AUTO_UPGRADE', { deploymentName: 'autonode' })).toEqual({ versioningBehavior: 'AUTO_UPGRADE' });
    // what an unversioned worker reports: no deployment, the SDK's own build id
    expect(versioningOptionsFor('PINNED', { deploymentName: '' })).toEqual({});
    expect(versioningOptionsFor('PINNED', undefined)).toEqual({});
  });
});
