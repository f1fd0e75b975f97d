import { parseFeatureGates } from '../../../workers/feature-gates';
import { parseWorkerArgs } from '../../../workers/main';

describe('feature gates', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['Autoprovision=true', true],
    [' Autoprovision = true ', true],
    ['Autoprovision=false', false],
  ])('%j → Autoprovision %s', (text, on) => {
    expect(parseFeatureGates(text).Autoprovision).toBe(on);
  });

  it.each([
    ['Autoprovison=true', /unknown feature gate "Autoprovison"; known gates: Autoprovision/],
    ['Autoprovision', /"Autoprovision" is not <Gate>=true\|false/],
    ['Autoprovision=yes', /Autoprovision=yes: the value must be true or false/],
    ['Autoprovision=true=1', /is not <Gate>=true\|false/],
  ])('%j is refused, naming the problem', (text, message) => {
    expect(() => parseFeatureGates(text)).toThrow(message);
  });

  it('the flag wins over AUTONODE_FEATURE_GATES; the variable alone works; its errors name it', () => {
    expect(parseWorkerArgs(['node', 'main.ts', '--feature-gates=Autoprovision=true'], { AUTONODE_FEATURE_GATES: 'Autoprovision=false' }).featureGates.Autoprovision).toBe(true);
    expect(parseWorkerArgs(['node', 'main.ts', '--feature-gates', 'Autoprovision=false'], { AUTONODE_FEATURE_GATES: 'Autoprovision=true' }).featureGates.Autoprovision).toBe(false);
    expect(parseWorkerArgs(['node', 'main.ts'], { AUTONODE_FEATURE_GATES: 'Autoprovision=true' }).featureGates.Autoprovision).toBe(true);
    expect(parseWorkerArgs(['node', 'main.ts'], {}).featureGates.Autoprovision).toBe(false);
    expect(() => parseWorkerArgs(['node', 'main.ts'], { AUTONODE_FEATURE_GATES: 'Nope=true' })).toThrow(/^AUTONODE_FEATURE_GATES: unknown feature gate "Nope"/);
  });
});
