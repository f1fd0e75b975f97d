import { parseRoleArn, partitionOfRegion } from '../../../core/hostedcluster';

describe('parseRoleArn', () => {
  it.each([
    ['arn:aws:iam::123456789012:role/autonode', { partition: 'aws', accountId: '123456789012', path: '/', name: 'autonode' }],
    ['arn:aws-cn:iam::000000000001:role/a/b/Karpenter+Role=1,x.y@z_-', { partition: 'aws-cn', accountId: '000000000001', path: '/a/b/', name: 'Karpenter+Role=1,x.y@z_-' }],
    ['arn:aws-us-gov:iam::123456789012:role/service-role/autonode', { partition: 'aws-us-gov', accountId: '123456789012', path: '/service-role/', name: 'autonode' }],
  ])('reads %s', (arn, expected) => {
    expect(parseRoleArn(arn)).toEqual({ ok: true, arn: expected });
  });

  it.each([
    ['', 'not an ARN'],
    ['autonode', 'not an ARN'],
    ['arn:aws:iam::123456789012', 'not an ARN'],
    ['arn:aws:iam::123456789012:role/x:y', 'more than six'],
    ['arn:aws-iso:iam::123456789012:role/autonode', 'partition "aws-iso"'],
    ['arn:AWS:iam::123456789012:role/autonode', 'partition "AWS"'],
    ['arn:aws:sts::123456789012:assumed-role/autonode/session', 'the "sts" service'],
    ['arn:aws:iam:us-east-1:123456789012:role/autonode', 'region "us-east-1"'],
    ['arn:aws:iam::12345678901:role/autonode', '12-digit'],
    ['arn:aws:iam::12345678901a:role/autonode', '12-digit'],
    ['arn:aws:iam::123456789012:user/autonode', 'not a role'],
    ['arn:aws:iam::123456789012:role/', 'role name ""'],
    ['arn:aws:iam::123456789012:role/has space', 'white space'],
    [`arn:aws:iam::123456789012:role/${'r'.repeat(65)}`, 'role name'],
    ['arn:aws:iam::123456789012:role//autonode', 'role path'],
    [`arn:aws:iam::123456789012:role/${'p/'.repeat(1100)}x`, 'at most 2048'],
  ])('rejects %j, saying %j', (arn, problem) => {
    const result = parseRoleArn(arn);
    if (result.ok) throw new Error(`accepted ${arn}`);
    expect(result.problem).toContain(problem);
  });
});

describe('partitionOfRegion', () => {
  it.each([
    ['us-east-1', 'aws'],
    ['eu-central-2', 'aws'],
    ['cn-northwest-1', 'aws-cn'],
    ['us-gov-east-1', 'aws-us-gov'],
  ])('%s is in %s', (region, partition) => {
    expect(partitionOfRegion(region)).toBe(partition);
  });
});
