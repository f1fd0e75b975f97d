/**
 * The EC2NodeClass status a launch writes, against the real guest kube-apiserver and the
 * generated CRD: written once, then recognised as already there (so a burst of launches of
 * one class writes nothing more), and written again when the resolution moves. What the
 * API server stores and answers must read back as equal to what was written — zone IDs,
 * deprecated AMIs, empty condition messages and all — or every launch would write again.
 */
import { randomUUID } from 'node:crypto';
import { kubeClientsFromKubeconfigFile, type KubeClients } from '../../activities/kube/clients';
import { recordNodeClassResolution } from '../../activities/kube/nodeclasses';
import { type NodeClassResolution } from '../../activities/cloud';
import { installCrds } from '../support/crds';
import { loadStackInfo } from '../support/stack';
import { anEC2NodeClass } from '../unit/api/builders';

const ref = { group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses' } as const;

const resolution: NodeClassResolution = {
  subnets: [
    { id: 'subnet-0a', zone: 'us-east-1a', zoneId: 'use1-az1', availableIpCount: 250 },
    { id: 'subnet-0b', zone: 'us-east-1b', availableIpCount: 250 },
  ],
  securityGroups: [{ id: 'sg-01', name: 'nodes' }],
  amis: [
    { id: 'ami-0000000000000000a', name: 'rhcos-new', architecture: 'x86_64', creationDate: '2026-11-01T00:00:00Z', deprecated: false },
    { id: 'ami-0000000000000000b', name: 'rhcos-old', architecture: 'arm64', creationDate: '2025-01-01T00:00:00Z', deprecated: true },
  ],
  conditions: [
    { type: 'SubnetsReady', status: 'True', reason: 'SubnetsResolved', message: '' },
    { type: 'SecurityGroupsReady', status: 'True', reason: 'SecurityGroupsResolved', message: 'term 2 matched nothing' },
    { type: 'AMIsReady', status: 'True', reason: 'AMIsResolved', message: '' },
    { type: 'Ready', status: 'True', reason: 'Ready', message: '' },
  ],
  ready: true,
};

describe('the EC2NodeClass status a launch writes (real kube-apiserver)', () => {
  let kube: KubeClients;
  const name = `status-${randomUUID().slice(0, 8)}`;
  const read = () => kube.customObjects.getClusterCustomObject({ ...ref, name });

  beforeAll(async () => {
    const path = loadStackInfo().guest.kubeconfigPath;
    await installCrds(path);
    kube = kubeClientsFromKubeconfigFile(path);
    await kube.customObjects.createClusterCustomObject({ ...ref, body: { ...anEC2NodeClass(), metadata: { name } } });
  });
  afterAll(async () => {
    await kube?.customObjects.deleteClusterCustomObject({ ...ref, name }).catch(() => undefined);
  });

  it('is written once, then read back as already there, and written again when the resolution moves', async () => {
    const options = { instanceProfile: 'nodes-profile', nowIso: '2026-11-29T00:00:00Z' };
    await expect(recordNodeClassResolution(kube, name, resolution, { ...options, current: await read() })).resolves.toBe(true);
    const written = (await read()) as { status: { subnets: unknown[]; amis: { deprecated?: boolean }[]; conditions: { type: string; lastTransitionTime: string }[] } };
    expect(written.status.subnets).toEqual([{ id: 'subnet-0a', zone: 'us-east-1a', zoneID: 'use1-az1' }, { id: 'subnet-0b', zone: 'us-east-1b' }]);
    expect(written.status.amis.map((a) => a.deprecated)).toEqual([undefined, true]);

    // later launches, with the class as they read it or without it
    const later = { ...options, nowIso: '2026-11-29T00:05:00Z' };
    await expect(recordNodeClassResolution(kube, name, resolution, { ...later, current: await read() })).resolves.toBe(false);
    await expect(recordNodeClassResolution(kube, name, resolution, later)).resolves.toBe(false);

    // a subnet more: written, and the conditions that kept their status keep their time
    const moved = { ...resolution, subnets: [...resolution.subnets, { id: 'subnet-0c', zone: 'us-east-1c', availableIpCount: 9 }] };
    await expect(recordNodeClassResolution(kube, name, moved, { ...later, current: await read() })).resolves.toBe(true);
    const rewritten = (await read()) as typeof written;
    expect(rewritten.status.subnets).toHaveLength(3);
    expect(rewritten.status.conditions.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-11-29T00:00:00Z');
  });

  it('a stale copy of the class that looks unchanged is not trusted for a write: it compares, then reads', async () => {
    const before = await read();
    // another writer flips Ready after the caller's read
    const flipped = { ...resolution, conditions: resolution.conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' as const, reason: 'NotReady', message: 'no AMI' } : c)) };
    await expect(recordNodeClassResolution(kube, name, flipped, { nowIso: '2026-11-29T00:10:00Z' })).resolves.toBe(true);
    // the caller's stale copy differs from its resolution, so it reads again and writes it back
    await expect(recordNodeClassResolution(kube, name, resolution, { nowIso: '2026-11-29T00:11:00Z', current: before })).resolves.toBe(true);
    const now = (await read()) as { status: { conditions: { type: string; status: string; lastTransitionTime: string }[] } };
    expect(now.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: '2026-11-29T00:11:00Z' });
  });
});
