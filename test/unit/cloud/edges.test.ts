import { assertEc2EndpointAllowed, endpointPolicyFromEnv, formatProviderId, parseProviderId, isInvalidRequestError, toApplicationFailure, InsufficientCapacityError, NotFoundError } from '../../../activities/cloud';
import { amiQuery, subnetFilters, securityGroupFilters, isEmptyTerm } from '../../../activities/cloud/selectors';
import { renderUserData, pickAmi } from '../../../activities/cloud/node-class';

describe('the EC2 endpoint guard under tests', () => {
  it.each([
    [{ JEST_WORKER_ID: '1' }, 'loopback-only'],
    [{ NODE_ENV: 'test' }, 'loopback-only'],
    [{ JEST_WORKER_ID: '1', AUTONODE_ALLOW_REMOTE_EC2: '1' }, 'any'],
    [{}, 'any'],
  ])('env %j gives %s', (env, policy) => {
    expect(endpointPolicyFromEnv(env)).toBe(policy);
  });

  it('accepts loopback and refuses anything else, including real AWS', () => {
    expect(() => assertEc2EndpointAllowed('http://127.0.0.1:5000', 'loopback-only')).not.toThrow();
    expect(() => assertEc2EndpointAllowed('http://localhost:5000', 'loopback-only')).not.toThrow();
    expect(() => assertEc2EndpointAllowed('https://ec2.us-east-1.amazonaws.com', 'loopback-only')).toThrow(/only loopback/);
    expect(() => assertEc2EndpointAllowed('http://127.0.0.1.evil.com', 'loopback-only')).toThrow(/only loopback/);
    expect(() => assertEc2EndpointAllowed(undefined, 'loopback-only')).toThrow(/real AWS/);
    expect(() => assertEc2EndpointAllowed('https://ec2.us-east-1.amazonaws.com', 'any')).not.toThrow();
  });
});

describe('provider ids', () => {
  it('round-trip', () => {
    expect(parseProviderId(formatProviderId('us-east-1a', 'i-0abc'))).toEqual({ zone: 'us-east-1a', instanceId: 'i-0abc' });
  });
  it('reject anything else with a typed error', () => {
    let error: unknown;
    try {
      parseProviderId('kwok://node-1');
    } catch (e) {
      error = e;
    }
    expect(isInvalidRequestError(error)).toBe(true);
  });
});

describe('selector terms', () => {
  it('AND the fields of a term and read "*" as "has the key"', () => {
    expect(subnetFilters({ id: 'subnet-1', tags: { 'karpenter.sh/discovery': 'c1', tier: '*' } })).toEqual([
      { Name: 'subnet-id', Values: ['subnet-1'] },
      { Name: 'tag:karpenter.sh/discovery', Values: ['c1'] },
      { Name: 'tag-key', Values: ['tier'] },
    ]);
    expect(securityGroupFilters({ name: 'nodes' })).toEqual([{ Name: 'group-name', Values: ['nodes'] }]);
  });

  it('default AMI owners to self and amazon unless an id or owner is given', () => {
    expect(amiQuery({ name: 'rhcos-*' }).owners).toEqual(['self', 'amazon']);
    expect(amiQuery({ id: 'ami-1' }).owners).toBeUndefined();
    expect(amiQuery({ name: 'x', owner: '123456789012' }).owners).toEqual(['123456789012']);
  });

  it('refuse an empty term, which would select everything', () => {
    expect(isEmptyTerm([undefined, {}])).toBe(true);
    expect(isEmptyTerm([undefined, { a: 'b' }])).toBe(false);
  });
});

describe('userData and AMIs', () => {
  it('passes Custom userData through untouched', () => {
    const userData = '{"ignition":{"version":"3.2.0"}}\n';
    expect(renderUserData({ amiFamily: 'Custom', userData, subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [] })).toEqual({ userData });
  });

  it('picks the newest non-deprecated AMI of the architecture', () => {
    const amis = [
      { id: 'ami-old', name: '', architecture: 'x86_64', creationDate: '2025-01-01T00:00:00Z', deprecated: false },
      { id: 'ami-new-deprecated', name: '', architecture: 'x86_64', creationDate: '2026-01-01T00:00:00Z', deprecated: true },
      { id: 'ami-new', name: '', architecture: 'x86_64', creationDate: '2025-06-01T00:00:00Z', deprecated: false },
      { id: 'ami-arm', name: '', architecture: 'arm64', creationDate: '2026-02-01T00:00:00Z', deprecated: false },
    ];
    expect(pickAmi(amis, 'x86_64')?.id).toBe('ami-new');
    expect(pickAmi(amis, 'arm64')?.id).toBe('ami-arm');
  });
});

describe('Temporal failures', () => {
  it('carry the kind as type, exhausted offerings as details, and are non-retryable when permanent', () => {
    const offering = { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot' as const, reason: 'InsufficientInstanceCapacity' };
    const failure = toApplicationFailure(new InsufficientCapacityError([offering]));
    expect(failure).toMatchObject({ type: 'InsufficientCapacity', nonRetryable: true, details: [{ offerings: [offering] }] });
    expect(failure.message).toBe('insufficient capacity in 1 offering(s): m5.large/us-east-1a/spot (InsufficientInstanceCapacity)');
    expect(toApplicationFailure(new NotFoundError('aws:///a/i-1', 'terminated', 'gone'))).toMatchObject({ type: 'NotFound', nonRetryable: true });
  });
});
