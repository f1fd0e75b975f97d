import { aliasParameters, parseAmiAlias, type AmiAlias } from '../../../activities/cloud/ami-alias';

const K8S = '1.31';
const P = '/aws/service';
const EKS = `${P}/eks/optimized-ami/${K8S}`;

function alias(raw: string): AmiAlias {
  const parsed = parseAmiAlias(raw);
  if (!parsed.ok) throw new Error(`expected ${raw} to parse: ${parsed.problem}`);
  return parsed.alias;
}

const pathsOf = (raw: string, pathPrefix = P) =>
  aliasParameters(alias(raw), { pathPrefix, kubernetesVersion: K8S }).map((p) => [p.path, p.architecture, p.variants.join('+')]);

describe('alias → Karpenter SSM parameters', () => {
  it.each<[string, string[][]]>([
    [
      'al2023@latest',
      [
        [`${EKS}/amazon-linux-2023/x86_64/standard/recommended/image_id`, 'x86_64', 'standard'],
        [`${EKS}/amazon-linux-2023/x86_64/nvidia/recommended/image_id`, 'x86_64', 'nvidia'],
        [`${EKS}/amazon-linux-2023/x86_64/neuron/recommended/image_id`, 'x86_64', 'neuron'],
        [`${EKS}/amazon-linux-2023/arm64/standard/recommended/image_id`, 'arm64', 'standard'],
        [`${EKS}/amazon-linux-2023/arm64/nvidia/recommended/image_id`, 'arm64', 'nvidia'],
      ],
    ],
    [
      'al2023@v20240807',
      [
        [`${EKS}/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.31-v20240807/image_id`, 'x86_64', 'standard'],
        [`${EKS}/amazon-linux-2023/x86_64/nvidia/amazon-eks-node-al2023-x86_64-nvidia-1.31-v20240807/image_id`, 'x86_64', 'nvidia'],
        [`${EKS}/amazon-linux-2023/x86_64/neuron/amazon-eks-node-al2023-x86_64-neuron-1.31-v20240807/image_id`, 'x86_64', 'neuron'],
        [`${EKS}/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.31-v20240807/image_id`, 'arm64', 'standard'],
        [`${EKS}/amazon-linux-2023/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-1.31-v20240807/image_id`, 'arm64', 'nvidia'],
      ],
    ],
    [
      'al2@latest',
      [
        [`${EKS}/amazon-linux-2/recommended/image_id`, 'x86_64', 'standard'],
        [`${EKS}/amazon-linux-2-arm64/recommended/image_id`, 'arm64', 'standard'],
        [`${EKS}/amazon-linux-2-gpu/recommended/image_id`, 'x86_64', 'neuron+nvidia'],
      ],
    ],
    [
      'al2@v20240807',
      [
        [`${EKS}/amazon-linux-2/amazon-eks-node-1.31-v20240807/image_id`, 'x86_64', 'standard'],
        [`${EKS}/amazon-linux-2-arm64/amazon-eks-arm64-node-1.31-v20240807/image_id`, 'arm64', 'standard'],
        [`${EKS}/amazon-linux-2-gpu/amazon-eks-gpu-node-1.31-v20240807/image_id`, 'x86_64', 'neuron+nvidia'],
      ],
    ],
    [
      'bottlerocket@latest',
      [
        [`${P}/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id`, 'x86_64', 'standard+neuron'],
        [`${P}/bottlerocket/aws-k8s-1.31/arm64/latest/image_id`, 'arm64', 'standard'],
        [`${P}/bottlerocket/aws-k8s-1.31-nvidia/x86_64/latest/image_id`, 'x86_64', 'nvidia'],
        [`${P}/bottlerocket/aws-k8s-1.31-nvidia/arm64/latest/image_id`, 'arm64', 'nvidia'],
      ],
    ],
    [
      // GitHub tags carry a v, SSM paths do not: both spellings reach the same parameter.
      'bottlerocket@v1.26.2',
      [
        [`${P}/bottlerocket/aws-k8s-1.31/x86_64/1.26.2/image_id`, 'x86_64', 'standard+neuron'],
        [`${P}/bottlerocket/aws-k8s-1.31/arm64/1.26.2/image_id`, 'arm64', 'standard'],
        [`${P}/bottlerocket/aws-k8s-1.31-nvidia/x86_64/1.26.2/image_id`, 'x86_64', 'nvidia'],
        [`${P}/bottlerocket/aws-k8s-1.31-nvidia/arm64/1.26.2/image_id`, 'arm64', 'nvidia'],
      ],
    ],
    ['windows2019@latest', [[`${P}/ami-windows-latest/Windows_Server-2019-English-Core-EKS_Optimized-1.31/image_id`, 'x86_64', 'standard']]],
    ['windows2022@latest', [[`${P}/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.31/image_id`, 'x86_64', 'standard']]],
    ['windows2025@latest', [[`${P}/ami-windows-latest/Windows_Server-2025-English-Core-EKS_Optimized-1.31/image_id`, 'x86_64', 'standard']]],
  ])('%s', (raw, expected) => {
    expect(pathsOf(raw)).toEqual(expected);
  });

  it('bottlerocket@1.26.2 and bottlerocket@v1.26.2 name the same parameters', () => {
    expect(pathsOf('bottlerocket@1.26.2')).toEqual(pathsOf('bottlerocket@v1.26.2'));
  });

  it('puts every path under the configured prefix, with or without a trailing slash', () => {
    const prefix = '/autonode-test-1234/service';
    for (const raw of ['al2023@latest', 'al2@latest', 'bottlerocket@latest', 'windows2022@latest']) {
      const paths = pathsOf(raw, `${prefix}/`).map(([path]) => path ?? '');
      expect(paths.every((p) => p.startsWith(`${prefix}/`) && !p.includes('//'))).toBe(true);
      expect(paths.map((p) => p.slice(prefix.length))).toEqual(pathsOf(raw).map(([path]) => (path ?? '').slice(P.length)));
    }
  });
});

describe('parsing an alias', () => {
  it.each([
    ['al2023', /not of the form family@version/],
    ['@latest', /not of the form family@version/],
    ['al2023@', /not of the form family@version/],
    ['ubuntu@latest', /family "ubuntu", which is not one of al2, al2023, bottlerocket, windows2019, windows2022, windows2025/],
    ['AL2023@latest', /family "AL2023", which is not one of/],
    ['windows2022@v20240101', /windows2022 accepts only version latest/],
    ['al2023@../../x', /version "..\/..\/x", which is not latest or a release/],
    ['al2023@v1/../latest', /which is not latest or a release/],
  ])('%s is refused, saying why', (raw, why) => {
    const parsed = parseAmiAlias(raw);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.problem).toMatch(why);
    expect(parsed.ok ? '' : parsed.problem).toContain(`"${raw}"`);
  });

  it('splits family and version', () => {
    expect(parseAmiAlias('al2023@v20240807')).toEqual({ ok: true, alias: { family: 'al2023', version: 'v20240807' } });
  });
});
