import { bundledCatalogData, bundledOnDemandPrices, catalogInstanceTypes } from '../../../core/instancetypes/catalog';
import { runCatalog } from '../../../starter/commands/catalog';
import { now } from './builders';

const representative = ['t3.nano', 't3.micro', 't3.medium', 'm5.large', 'm5.metal', 'g4dn.xlarge', 'm6g.large', 'm5d.large', 'i3.large'];

function run(options: Record<string, unknown>): { code: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const code = runCatalog({ region: 'us-east-1', amiFamily: 'AL2023', output: 'json', ...options }, {
    stdout: (text) => { stdout += text; },
    stderr: (text) => { stderr += text; },
    now,
  });
  return { code, stdout, stderr };
}

describe('bundled catalog', () => {
  it('says where its data came from', () => {
    expect(bundledCatalogData().source.instanceTypes).toMatch(/^moto 5\.2\.5/);
    expect(bundledOnDemandPrices()).toEqual(expect.objectContaining({ region: 'us-east-1', observedAt: '2026-07-20T13:44:30Z' }));
  });

  it('offers the representative types in us-east-1 with prices', () => {
    const result = catalogInstanceTypes({ region: 'us-east-1', amiFamily: 'AL2023', now });
    if (!result.ok) throw new Error(result.reason);
    expect(result.warnings).toEqual([]);
    expect(result.instanceTypes.length).toBeGreaterThan(500);
    const byName = new Map(result.instanceTypes.map((it) => [it.name, it]));
    for (const name of representative) {
      expect([name, byName.get(name)?.offerings.some((o) => o.available && o.capacityType === 'on-demand')]).toEqual([name, true]);
    }
    expect(byName.get('m5.large')?.allocatable).toEqual({ cpu: '1930m', 'ephemeral-storage': '17Gi', memory: '6903Mi', pods: '29' });
    const names = result.instanceTypes.map((it) => it.name);
    expect(names).toEqual([...names].sort());
  });

  it('falls back to us-east-1 prices elsewhere, with a warning', () => {
    const result = catalogInstanceTypes({ region: 'eu-west-1', amiFamily: 'AL2023', now });
    expect(result).toEqual(expect.objectContaining({ ok: true, warnings: [expect.stringContaining('using us-east-1 on-demand prices')] }));
  });

  it('rejects a region it does not know', () => {
    expect(catalogInstanceTypes({ region: 'mars-1', amiFamily: 'AL2023', now })).toEqual({ ok: false, reason: expect.stringContaining('region mars-1 is not in the bundled catalog') });
  });
});

describe('autonode catalog', () => {
  it('prints only JSON on stdout with -o json', () => {
    const { code, stdout, stderr } = run({});
    expect([code, stderr]).toEqual([0, '']);
    const parsed: unknown = JSON.parse(stdout);
    expect(Array.isArray(parsed)).toBe(true);
    expect(parsed).toEqual(expect.arrayContaining([expect.objectContaining({
      name: 'm5.large',
      allocatable: { cpu: '1930m', 'ephemeral-storage': '17Gi', memory: '6903Mi', pods: '29' },
      labels: expect.objectContaining({ 'kubernetes.io/arch': 'amd64' }),
      offerings: expect.arrayContaining([{ zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096, available: true }]),
    })]));
  });

  it('models HyperShift nodes with --ami-family Custom and a kubelet profile', () => {
    const { code, stdout } = run({ amiFamily: 'Custom', kubeletProfile: 'openshift-autosize' });
    expect(code).toBe(0);
    expect(stdout).toContain('"memory": "5429Mi"');
  });

  it('prints a table by default', () => {
    const { code, stdout } = run({ output: 'table' });
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(/^NAME\s+ARCH\s+CPU\s+MEMORY\s+PODS\s+ZONES\s+ON-DEMAND\s+SPOT$/);
    expect(stdout).toMatch(/\nm5\.large\s+amd64\s+1930m\s+6903Mi\s+29\s+5\s+0\.0960\s+0\.0384\n/);
  });

  it.each([
    [{ amiFamily: 'Windows2022' }, '--amiFamily'],
    [{ kubeletProfile: 'openshift-static' }, '--kubelet-profile applies only to --ami-family Custom'],
    [{ output: 'yaml' }, '--output'],
  ])('rejects %j', (options, message) => {
    const { code, stderr } = run(options);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });
});
