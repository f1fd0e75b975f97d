import { joinOverrides, splitOverrides, withErrorSet } from '../../support/ec2-fault-proxy';

describe('the fault proxy’s CreateFleet rewriting', () => {
  it('removes overrides and renumbers the rest', () => {
    const params = new URLSearchParams(
      'Action=CreateFleet&LaunchTemplateConfigs.1.Overrides.1.InstanceType=m5.large&LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone=us-east-1a' +
        '&LaunchTemplateConfigs.1.Overrides.2.InstanceType=m5.large&LaunchTemplateConfigs.1.Overrides.2.AvailabilityZone=us-east-1b' +
        '&LaunchTemplateConfigs.1.Overrides.10.InstanceType=c5.large&LaunchTemplateConfigs.1.Overrides.10.AvailabilityZone=us-east-1c',
    );
    const { rest, overrides } = splitOverrides(params);
    expect(overrides.map((o) => o.fields.get('AvailabilityZone'))).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
    const joined = joinOverrides(rest, overrides.slice(1));
    expect(joined.get('LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone')).toBe('us-east-1b');
    expect(joined.get('LaunchTemplateConfigs.1.Overrides.2.InstanceType')).toBe('c5.large');
    expect(joined.has('LaunchTemplateConfigs.1.Overrides.3.InstanceType')).toBe(false);
    expect(joined.get('Action')).toBe('CreateFleet');
  });

  it('drops a launch template config left without overrides and renumbers the others', () => {
    const params = new URLSearchParams(
      'Action=CreateFleet' +
        '&LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId=lt-arm&LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version=%24Default' +
        '&LaunchTemplateConfigs.1.Overrides.1.InstanceType=t4g.large&LaunchTemplateConfigs.1.Overrides.1.ImageId=ami-arm' +
        '&LaunchTemplateConfigs.2.LaunchTemplateSpecification.LaunchTemplateId=lt-x86&LaunchTemplateConfigs.2.LaunchTemplateSpecification.Version=%24Default' +
        '&LaunchTemplateConfigs.2.Overrides.1.InstanceType=m5.large&LaunchTemplateConfigs.2.Overrides.1.ImageId=ami-x86',
    );
    const { rest, overrides } = splitOverrides(params);
    const joined = joinOverrides(rest, overrides.filter((o) => o.fields.get('InstanceType') !== 't4g.large'));
    expect([...joined.entries()].filter(([key]) => key.startsWith('LaunchTemplateConfigs.'))).toEqual([
      ['LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId', 'lt-x86'],
      ['LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version', '$Default'],
      ['LaunchTemplateConfigs.1.Overrides.1.InstanceType', 'm5.large'],
      ['LaunchTemplateConfigs.1.Overrides.1.ImageId', 'ami-x86'],
    ]);
  });

  it('adds the errorSet to a response that has none', () => {
    expect(withErrorSet('<CreateFleetResponse><fleetId>f</fleetId></CreateFleetResponse>', ['<item/>'])).toBe(
      '<CreateFleetResponse><fleetId>f</fleetId><errorSet><item/></errorSet></CreateFleetResponse>',
    );
  });
});
