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

  it('adds the errorSet to a response that has none', () => {
    expect(withErrorSet('<CreateFleetResponse><fleetId>f</fleetId></CreateFleetResponse>', ['<item/>'])).toBe(
      '<CreateFleetResponse><fleetId>f</fleetId><errorSet><item/></errorSet></CreateFleetResponse>',
    );
  });
});
