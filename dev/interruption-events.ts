// EventBridge events as they arrive in an interruption queue, with defaults: for the
// parser's rule table, the integration tests that send them into moto's SQS, and
// `autonode interrupt` on the local stack. The shapes
// are the AWS EventBridge schemas Karpenter parses (aws.ec2@EC2SpotInstanceInterruptionWarning,
// …RebalanceRecommendation, …InstanceStateChangeNotification, aws.health@AWSHealthEvent).

export interface EventOptions {
  id?: string;
  /** ISO time; default 2026-01-01T00:00:00Z */
  time?: string;
  account?: string;
  region?: string;
}

const envelope = (source: string, detailType: string, detail: unknown, o: EventOptions) => ({
  version: '0',
  id: o.id ?? '7a1b2c3d-0000-4000-8000-000000000001',
  'detail-type': detailType,
  source,
  account: o.account ?? '123456789012',
  time: o.time ?? '2026-01-01T00:00:00Z',
  region: o.region ?? 'us-east-1',
  resources: [],
  detail,
});

export const aSpotInterruption = (instanceId: string, o: EventOptions = {}) =>
  envelope('aws.ec2', 'EC2 Spot Instance Interruption Warning', { 'instance-id': instanceId, 'instance-action': 'terminate' }, o);

export const aRebalanceRecommendation = (instanceId: string, o: EventOptions = {}) =>
  envelope('aws.ec2', 'EC2 Instance Rebalance Recommendation', { 'instance-id': instanceId }, o);

export const aStateChange = (instanceId: string, state: string, o: EventOptions = {}) =>
  envelope('aws.ec2', 'EC2 Instance State-change Notification', { 'instance-id': instanceId, state }, o);

export const aScheduledChange = (instanceIds: string[], o: EventOptions & { service?: string; category?: string } = {}) =>
  envelope(
    'aws.health',
    'AWS Health Event',
    {
      eventArn: 'arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_1',
      service: o.service ?? 'EC2',
      eventTypeCode: 'AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED',
      eventTypeCategory: o.category ?? 'scheduledChange',
      startTime: 'Sat, 05 Jun 2027 15:10:09 GMT',
      eventDescription: [{ language: 'en_US', latestDescription: 'EC2 has detected degradation of the underlying hardware hosting your instance.' }],
      affectedEntities: instanceIds.map((entityValue) => ({ entityValue })),
    },
    o,
  );

export const body = (event: unknown): string => JSON.stringify(event);
