// A disruption's or interruption's replacement is planned with the provisioner's memory of
// insufficient capacity (activities/provisioner/activity.ts `provisionerMemory`).
import { type Client } from '@temporalio/client';
import { mergeHeld, provisionerMemory } from '../../../activities/provisioner/activity';

const at = new Date('2026-11-24T10:00:00Z');
const clientAnswering = (answer: () => Promise<unknown>) => {
  const asked: string[] = [];
  const client = { workflow: { getHandle: (id: string) => ({ query: async (name: string) => { asked.push(`${id} ${name}`); return answer(); } }) } } as unknown as Pick<Client, 'workflow'>;
  return { client, asked };
};

describe('provisionerMemory', () => {
  it('asks the cluster\'s provisioner and keeps the offerings still held', async () => {
    const { client, asked } = clientAnswering(async () => ({
      batches: 3,
      unavailableOfferings: [
        { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'on-demand', until: '2026-11-24T10:02:00Z' },
        { instanceType: 'c5.large', zone: 'us-east-1b', capacityType: 'spot', until: '2026-11-24T10:00:30Z' },
        { instanceType: 'r5.large', zone: 'us-east-1c', capacityType: 'on-demand', until: '2026-11-24T09:59:59Z' },
      ],
    }));
    expect(await provisionerMemory(client, 'c1', at)).toEqual([
      { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'on-demand' },
      { instanceType: 'c5.large', zone: 'us-east-1b', capacityType: 'spot' },
    ]);
    expect(asked).toEqual(['autonode/c1/provisioner status']);
  });

  it('holds nothing when there is no provisioner, or it does not answer in time', async () => {
    const missing = clientAnswering(async () => { throw new Error('workflow not found'); });
    expect(await provisionerMemory(missing.client, 'c1', at)).toEqual([]);
    const silent = clientAnswering(() => new Promise(() => undefined));
    expect(await provisionerMemory(silent.client, 'c1', at, 20)).toEqual([]);
  });

  it('mergeHeld keeps each offering once', () => {
    const a = { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'on-demand' as const };
    const b = { instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot' as const };
    expect(mergeHeld([a], [a, b])).toEqual([a, b]);
  });
});
