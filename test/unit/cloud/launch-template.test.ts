import { canonicalJson, launchTemplateName, type LaunchTemplateContent } from '../../../activities/cloud/launch-template';

const aTemplate = (overrides: Partial<LaunchTemplateContent> = {}): LaunchTemplateContent => ({
  nodeClassName: 'default',
  imageId: 'ami-0abc',
  userData: '#!/bin/bash\necho hi\n',
  securityGroupIds: ['sg-2', 'sg-1'],
  tags: { team: 'a' },
  ...overrides,
});

describe('launch template names', () => {
  it('are deterministic and readable', () => {
    const name = launchTemplateName('c1', aTemplate());
    expect(name).toMatch(/^autonode\/c1\/default\/[0-9a-f]{16}$/);
    expect(launchTemplateName('c1', aTemplate())).toBe(name);
  });

  it('do not depend on security-group or tag order', () => {
    expect(launchTemplateName('c1', aTemplate({ securityGroupIds: ['sg-1', 'sg-2'] }))).toBe(launchTemplateName('c1', aTemplate()));
    expect(launchTemplateName('c1', aTemplate({ tags: { b: '2', a: '1' } }))).toBe(launchTemplateName('c1', aTemplate({ tags: { a: '1', b: '2' } })));
  });

  it.each([
    ['AMI', { imageId: 'ami-0def' }],
    ['userData', { userData: '#!/bin/bash\necho bye\n' }],
    ['node class', { nodeClassName: 'gpu' }],
    ['security groups', { securityGroupIds: ['sg-3'] }],
    ['instance profile', { instanceProfile: 'worker' }],
  ])('change with the %s', (_, change) => {
    expect(launchTemplateName('c1', aTemplate(change))).not.toBe(launchTemplateName('c1', aTemplate()));
  });

  it('differ between clusters', () => {
    expect(launchTemplateName('c1', aTemplate()).slice(-16)).not.toBe(launchTemplateName('c2', aTemplate()).slice(-16));
  });

  it('fall back to the bare hash when the readable name would be too long', () => {
    expect(launchTemplateName('c'.repeat(120), aTemplate())).toMatch(/^autonode\/[0-9a-f]{32}$/);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: undefined } })).toBe('{"a":{"d":[2,{"x":0,"y":1}]},"b":1}');
  });
});
