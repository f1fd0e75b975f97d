import { GetParameterCommand } from '@aws-sdk/client-ssm';
import { resolveAmiTerms, effectiveAmiFamily, type AmiTermDeps } from '../../../activities/cloud/ami-terms';
import { pickAmi, type AmiQuery, type ResolvedAmi } from '../../../activities/cloud/amis';
import { renderUserData } from '../../../activities/cloud/node-class';
import { type NodeClassInput } from '../../../activities/cloud/node-class-input';
import { createSsmParameterLookup, type SsmApi } from '../../../activities/cloud/ssm';
import { isAuthorizationError, silentLogger, type RetryEvent } from '../../../activities/cloud';
import { anAwsError } from './fake-instance-type-ec2';

const PREFIX = '/autonode-test/service';
const EKS = `${PREFIX}/eks/optimized-ami/1.31`;

/** A faithful-enough SSM port: a map, recording what was asked. */
function fakeSsm(parameters: Record<string, string>) {
  const asked: string[] = [];
  const lookup = (name: string) => {
    asked.push(name);
    return Promise.resolve(parameters[name]);
  };
  return { lookup, asked };
}

/** DescribeImages over a fixed image list, honouring the filters resolution sends. */
function fakeImages(images: ResolvedAmi[]) {
  const queries: AmiQuery[] = [];
  const describeAmis = (query: AmiQuery) => {
    queries.push(query);
    const ids = query.filters.find((f) => f.Name === 'image-id')?.Values;
    const names = query.filters.find((f) => f.Name === 'name')?.Values;
    return Promise.resolve(images.filter((i) => (!ids || ids.includes(i.id)) && (!names || names.includes(i.name))));
  };
  return { describeAmis, queries };
}

const anAmi = (id: string, overrides: Partial<ResolvedAmi> = {}): ResolvedAmi => ({
  id,
  name: `image-${id}`,
  architecture: 'x86_64',
  creationDate: '2026-01-01T00:00:00.000Z',
  deprecated: false,
  ...overrides,
});

const IMAGES = [anAmi('ami-std'), anAmi('ami-gpu', { creationDate: '2026-02-01T00:00:00.000Z' }), anAmi('ami-arm', { architecture: 'arm64' })];

function deps(parameters: Record<string, string>, overrides: Partial<AmiTermDeps> = {}) {
  const ssm = fakeSsm(parameters);
  const images = fakeImages(IMAGES);
  const all: AmiTermDeps = {
    describeAmis: images.describeAmis,
    ssmParameter: ssm.lookup,
    aliases: { ssmPathPrefix: PREFIX, kubernetesVersion: '1.31' },
    ...overrides,
  };
  return { deps: all, ssm, images };
}

const spec = (amiSelectorTerms: NodeClassInput['spec']['amiSelectorTerms'], amiFamily?: string) => ({
  amiSelectorTerms,
  ...(amiFamily !== undefined ? { amiFamily } : {}),
});

describe('alias terms', () => {
  const published = {
    [`${EKS}/amazon-linux-2023/x86_64/standard/recommended/image_id`]: 'ami-std',
    [`${EKS}/amazon-linux-2023/x86_64/nvidia/recommended/image_id`]: 'ami-gpu',
    [`${EKS}/amazon-linux-2023/arm64/standard/recommended/image_id`]: 'ami-arm',
  };

  it('resolve every published variant through SSM, and describe them by id', async () => {
    const { deps: d, ssm, images } = deps(published);
    const outcome = await resolveAmiTerms(spec([{ alias: 'al2023@latest' }], 'Custom'), d);

    expect(outcome.problems).toEqual([]);
    expect(outcome.found.map((a) => [a.id, a.variants])).toEqual([
      ['ami-arm', ['standard']],
      ['ami-gpu', ['nvidia']],
      ['ami-std', ['standard']],
    ]);
    expect(ssm.asked).toHaveLength(5);
    expect(images.queries).toEqual([{ filters: [{ Name: 'image-id', Values: ['ami-arm', 'ami-gpu', 'ami-std'] }, { Name: 'state', Values: ['available'] }] }]);
  });

  it('launch the standard image on a plain instance even when the NVIDIA one is newer', async () => {
    const { deps: d } = deps(published);
    const outcome = await resolveAmiTerms(spec([{ alias: 'al2023@latest' }]), d);
    expect(pickAmi(outcome.found, 'x86_64')?.id).toBe('ami-std');
    expect(pickAmi(outcome.found, 'arm64')?.id).toBe('ami-arm');
  });

  it('say which parameters were missing when none is published', async () => {
    const { deps: d } = deps({});
    const outcome = await resolveAmiTerms(spec([{ alias: 'al2023@latest' }]), d);
    expect(outcome.found).toEqual([]);
    expect(outcome.problems).toEqual([
      `amiSelectorTerms[0] {"alias":"al2023@latest"} found no AMI: none of the 5 SSM parameter(s) it maps to holds one (e.g. ${EKS}/amazon-linux-2023/x86_64/standard/recommended/image_id)`,
    ]);
  });

  it('say when the parameters name AMIs EC2 does not have', async () => {
    const { deps: d } = deps({ [`${PREFIX}/bottlerocket/aws-k8s-1.31/x86_64/1.26.2/image_id`]: 'ami-gone' });
    const outcome = await resolveAmiTerms(spec([{ alias: 'bottlerocket@v1.26.2' }]), d);
    expect(outcome.problems).toEqual([
      'amiSelectorTerms[0] {"alias":"bottlerocket@v1.26.2"} resolved through SSM to ami-gone, which DescribeImages does not return (deregistered, or not shared with this account)',
    ]);
  });

  it.each<[string, NodeClassInput['spec']['amiSelectorTerms'], string | undefined, string]>([
    ['an unknown family', [{ alias: 'ubuntu@latest' }], undefined, 'amiSelectorTerms[0] {"alias":"ubuntu@latest"}: alias "ubuntu@latest" names family "ubuntu"'],
    ['a malformed alias', [{ alias: 'al2023' }], undefined, 'amiSelectorTerms[0] {"alias":"al2023"}: alias "al2023" is not of the form family@version'],
    ['a pinned Windows version', [{ alias: 'windows2022@v1' }], undefined, 'windows2022 accepts only version latest'],
    ['another term next to the alias', [{ alias: 'al2023@latest' }, { id: 'ami-std' }], undefined, 'an alias must be the only amiSelectorTerm, but there are 2'],
    ['other fields in the alias term', [{ alias: 'al2023@latest', tags: { a: 'b' } }], undefined, 'alias cannot be combined with tags in one term'],
    ['a different amiFamily', [{ alias: 'al2023@latest' }], 'AL2', 'alias al2023@latest selects AL2023 AMIs, but amiFamily is AL2: set amiFamily to AL2023 or Custom'],
  ])('refuse %s as invalid, naming the term, without looking anything up', async (_case, terms, amiFamily, message) => {
    const { deps: d, ssm, images } = deps(published);
    const outcome = await resolveAmiTerms(spec(terms, amiFamily), d);
    expect(outcome.invalid).toBe(true);
    expect(outcome.found).toEqual([]);
    expect(outcome.problems.join('; ')).toContain(message);
    expect(ssm.asked).toEqual([]);
    expect(images.queries).toEqual([]);
  });

  it('accept amiFamily Custom or the matching family, as Karpenter does', async () => {
    for (const amiFamily of ['Custom', 'AL2023', undefined]) {
      const outcome = await resolveAmiTerms(spec([{ alias: 'al2023@latest' }], amiFamily), deps(published).deps);
      expect(outcome.invalid).toBeUndefined();
      expect(outcome.found).toHaveLength(3);
    }
  });

  it('say what is missing when the provider has no Kubernetes version or no SSM', async () => {
    const noVersion = deps(published, { aliases: { ssmPathPrefix: PREFIX } }).deps;
    expect((await resolveAmiTerms(spec([{ alias: 'al2@latest' }]), noVersion)).problems).toEqual([
      `amiSelectorTerms[0] {"alias":"al2@latest"} needs the cluster's Kubernetes version to find the EKS AMI parameters, and this provider was not given one`,
    ]);
    const { ssmParameter: _ssm, ...noSsm } = deps(published).deps;
    expect((await resolveAmiTerms(spec([{ alias: 'al2@latest' }]), noSsm)).problems).toEqual([
      'amiSelectorTerms[0] {"alias":"al2@latest"} needs SSM Parameter Store, and this provider was built without an SSM client',
    ]);
  });
});

describe('ssmParameter terms', () => {
  it('read the AMI id from the parameter and describe it like an id term', async () => {
    const { deps: d, images } = deps({ '/team/node-ami': 'ami-std' });
    const outcome = await resolveAmiTerms(spec([{ ssmParameter: '/team/node-ami' }], 'Custom'), d);
    expect(outcome.found.map((a) => a.id)).toEqual(['ami-std']);
    expect(outcome.found[0]?.variants).toBeUndefined();
    expect(images.queries[0]?.owners).toBeUndefined();
  });

  it('AND the term\'s other fields with the id', async () => {
    const { deps: d } = deps({ '/team/node-ami': 'ami-std' });
    const outcome = await resolveAmiTerms(spec([{ ssmParameter: '/team/node-ami', name: 'another-name' }], 'Custom'), d);
    expect(outcome.problems).toEqual([
      `amiSelectorTerms[0] {"ssmParameter":"/team/node-ami","name":"another-name"} names SSM parameter /team/node-ami → ami-std, which DescribeImages does not return with the term's other fields`,
    ]);
  });

  it.each([
    [{}, 'names SSM parameter /team/node-ami, which does not exist'],
    [{ '/team/node-ami': 'rhcos-4.17' }, 'names SSM parameter /team/node-ami, whose value "rhcos-4.17" is not an AMI id'],
  ])('with parameters %j: not Ready, saying "%s"', async (parameters, message) => {
    const outcome = await resolveAmiTerms(spec([{ ssmParameter: '/team/node-ami' }], 'Custom'), deps(parameters).deps);
    expect(outcome.found).toEqual([]);
    expect(outcome.problems).toEqual([`amiSelectorTerms[0] {"ssmParameter":"/team/node-ami"} ${message}`]);
  });

  it('are ORed with other terms: a missing parameter leaves the others resolving', async () => {
    const { deps: d } = deps({});
    const outcome = await resolveAmiTerms(spec([{ ssmParameter: '/team/node-ami' }, { id: 'ami-arm' }], 'Custom'), d);
    expect(outcome.found.map((a) => a.id)).toEqual(['ami-arm']);
    expect(outcome.problems).toEqual(['amiSelectorTerms[0] {"ssmParameter":"/team/node-ami"} names SSM parameter /team/node-ami, which does not exist']);
  });
});

describe('the amiFamily an alias implies', () => {
  it('is the alias family unless amiFamily says otherwise', () => {
    expect(effectiveAmiFamily(spec([{ alias: 'bottlerocket@latest' }]))).toBe('Bottlerocket');
    expect(effectiveAmiFamily(spec([{ alias: 'bottlerocket@latest' }], 'Custom'))).toBe('Custom');
    expect(effectiveAmiFamily(spec([{ id: 'ami-1' }]))).toBeUndefined();
  });

  it('tells the admin how to use an alias with autonode (amiFamily: Custom)', () => {
    const rendered = renderUserData({ subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [{ alias: 'al2023@latest' }] });
    expect(rendered).toEqual({
      problem: "amiFamily AL2023 (implied by the alias) is not supported: autonode launches amiFamily Custom, whose userData is passed through; set amiFamily: Custom to use the alias's AMIs",
    });
  });
});

describe('the SSM port over @aws-sdk/client-ssm', () => {
  const clock = { now: () => new Date(0), sleep: () => Promise.resolve() };
  const policy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 };

  /** An SsmApi answering GetParameter from a script of outcomes, recording the names asked. */
  function scriptedSsm(script: (name: string, attempt: number) => unknown) {
    const names: string[] = [];
    const api: SsmApi = {
      send: ((command: unknown) => {
        if (!(command instanceof GetParameterCommand)) throw new Error('unexpected command');
        const name = command.input.Name ?? '';
        names.push(name);
        const outcome = script(name, names.length);
        return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
      }) as SsmApi['send'],
    };
    return { api, names };
  }

  it('returns the value, undefined for ParameterNotFound, and retries throttling', async () => {
    const retries: RetryEvent[] = [];
    const ssm = scriptedSsm((name, attempt) => {
      if (name === '/missing') return anAwsError('ParameterNotFound', 400);
      if (attempt === 2) return anAwsError('ThrottlingException', 400);
      return { Parameter: { Name: name, Value: 'ami-0123' } };
    });
    const lookup = createSsmParameterLookup({ ssm: ssm.api, retry: { policy, clock, logger: silentLogger, onRetry: (e) => retries.push(e) } });

    expect(await lookup('/present')).toBe('ami-0123');
    expect(await lookup('/flaky')).toBe('ami-0123');
    expect(await lookup('/missing')).toBeUndefined();
    expect(ssm.names).toEqual(['/present', '/flaky', '/flaky', '/missing']);
    expect(retries).toEqual([expect.objectContaining({ operation: 'GetParameter', code: 'ThrottlingException', attempt: 1 })]);
  });

  it('turns a denial into an AuthorizationError naming ssm:GetParameter', async () => {
    const ssm = scriptedSsm(() => anAwsError('AccessDeniedException', 400));
    const lookup = createSsmParameterLookup({ ssm: ssm.api, retry: { policy, clock, logger: silentLogger } });
    const error = await lookup('/aws/service/x').catch((e: unknown) => e);
    expect(isAuthorizationError(error)).toBe(true);
    expect(isAuthorizationError(error) && error.missingPermissions).toEqual(['ssm:GetParameter']);
    expect(ssm.names).toHaveLength(1);
  });
});
