import { DescribeLaunchTemplatesCommand } from '@aws-sdk/client-ec2';
import { startCloudHarness, aNodeClass, type CloudHarness } from '../../support/cloud';
import { launchTemplateContent } from '../../../activities/cloud/launch';

let h: CloudHarness;
beforeAll(async () => {
  h = await startCloudHarness();
});
afterAll(async () => {
  await h?.close();
});

const conditionsOf = (conditions: { type: string; status: string; message: string }[]) =>
  Object.fromEntries(conditions.map((c) => [c.type, c]));

describe('resolving an EC2NodeClass', () => {
  it('resolves subnets, security groups and AMIs by tag, and is Ready', async () => {
    const resolution = await h.provider.resolveNodeClass(aNodeClass(h));

    expect(resolution.ready).toBe(true);
    expect(resolution.subnets.map((s) => s.id).sort()).toEqual([...h.fixtures.subnetIds].sort());
    expect(resolution.subnets.map((s) => s.zone).sort()).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
    expect(resolution.securityGroups.map((g) => g.id)).toEqual([h.fixtures.securityGroupId]);
    expect(resolution.amis.map((a) => a.id)).toEqual([h.fixtures.imageId]);
    expect(resolution.userData).toBe('#!/bin/bash\necho "join the hosted cluster"\n');
    expect(conditionsOf(resolution.conditions)).toMatchObject({
      SubnetsReady: { status: 'True' },
      SecurityGroupsReady: { status: 'True' },
      AMIsReady: { status: 'True' },
      Ready: { status: 'True' },
    });
  });

  it('resolves by id, by name and with a "*" tag wildcard', async () => {
    const resolution = await h.provider.resolveNodeClass(
      aNodeClass(h, {
        subnetSelectorTerms: [{ id: h.fixtures.subnetIds[1] }],
        securityGroupSelectorTerms: [{ name: `${h.cluster.name}-nodes` }],
        amiSelectorTerms: [{ id: h.fixtures.imageId }],
      }),
    );
    expect(resolution.subnets.map((s) => s.id)).toEqual([h.fixtures.subnetIds[1]]);
    expect(resolution.securityGroups.map((g) => g.id)).toEqual([h.fixtures.securityGroupId]);
    expect(resolution.amis.map((a) => a.id)).toEqual([h.fixtures.imageId]);

    const wildcard = await h.provider.resolveNodeClass(aNodeClass(h, { subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': '*' } }] }));
    expect(wildcard.subnets.map((s) => s.id)).toEqual(expect.arrayContaining(h.fixtures.subnetIds));
  });

  it('says which selector matched nothing', async () => {
    const resolution = await h.provider.resolveNodeClass(
      aNodeClass(h, { subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'no-such-cluster' } }] }),
    );

    expect(resolution.ready).toBe(false);
    expect(resolution.subnets).toEqual([]);
    const conditions = conditionsOf(resolution.conditions);
    expect(conditions.SubnetsReady).toMatchObject({ status: 'False', reason: 'SubnetsNotFound' });
    expect(conditions.SubnetsReady?.message).toBe(
      'no subnets resolved: subnetSelectorTerms[0] {"tags":{"karpenter.sh/discovery":"no-such-cluster"}} matched nothing',
    );
    expect(conditions.SecurityGroupsReady).toMatchObject({ status: 'True' });
    expect(conditions.Ready).toMatchObject({ status: 'False' });
    expect(conditions.Ready?.message).toContain('SubnetsReady: no subnets resolved: subnetSelectorTerms[0]');
  });

  it('is not Ready for a family whose userData it cannot render', async () => {
    const resolution = await h.provider.resolveNodeClass(aNodeClass(h, { amiFamily: 'AL2023' }));
    expect(resolution.ready).toBe(false);
    expect(conditionsOf(resolution.conditions).ValidationSucceeded?.message).toContain('amiFamily AL2023 is not supported');
  });
});

describe('launch templates', () => {
  const content = (h: CloudHarness, userData: string) =>
    launchTemplateContent({ name: 'default', amiFamily: 'Custom', userData, securityGroupIds: [h.fixtures.securityGroupId], subnets: [], tags: { team: 'autonode' } }, h.fixtures.imageId);

  it('are named by content, reused, and the stale ones deleted', async () => {
    const first = await h.provider.ensureLaunchTemplate(content(h, 'v1'));
    const again = await h.provider.ensureLaunchTemplate(content(h, 'v1'));
    const second = await h.provider.ensureLaunchTemplate(content(h, 'v2'));

    expect(again).toEqual(first);
    // kept in memory: a burst's launches describe their template once
    const described = h.proxy.count('DescribeLaunchTemplates');
    await Promise.all([h.provider.ensureLaunchTemplate(content(h, 'v1')), h.provider.ensureLaunchTemplate(content(h, 'v1'))]);
    expect(h.proxy.count('DescribeLaunchTemplates')).toBe(described);
    expect(first.name).toMatch(new RegExp(`^autonode/${h.cluster.name}/default/[0-9a-f]{16}$`));
    expect(second.name).not.toBe(first.name);

    const deleted = await h.provider.deleteStaleLaunchTemplates({ nodeClassName: 'default', keep: [second.name] });
    expect(deleted).toEqual([first.name]);
    expect(await h.provider.deleteStaleLaunchTemplates({ nodeClassName: 'default', keep: [second.name] })).toEqual([]);
    // the deleted one is forgotten: ensuring it again creates it again
    const recreated = await h.provider.ensureLaunchTemplate(content(h, 'v1'));
    expect(recreated.name).toBe(first.name);
    expect(recreated.id).not.toBe(first.id);
  });

  it('treats AlreadyExists from a concurrent creation as success', async () => {
    // The race made deterministic: the first creation is held at the proxy while another
    // worker's ensure creates the template, so moto answers the first with AlreadyExists.
    // (Within one process concurrent ensures share one call. Two creations merely sent
    // together can both succeed on moto, which does not check names atomically, and leave
    // two templates of one name: a CI run failed on that.)
    let concurrent: ReturnType<CloudHarness['provider']['ensureLaunchTemplate']> | undefined;
    h.proxy.inject({
      kind: 'hold',
      action: 'CreateLaunchTemplate',
      hold: async () => {
        concurrent = h.otherWorker.ensureLaunchTemplate(content(h, 'race'));
        await concurrent;
      },
    });
    const first = await h.provider.ensureLaunchTemplate(content(h, 'race'));
    expect(first).toEqual(await concurrent);
    const named = await h.direct.send(new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: [first.name] }));
    expect(named.LaunchTemplates?.map((t) => t.LaunchTemplateId)).toEqual([first.id]);
  });
});
