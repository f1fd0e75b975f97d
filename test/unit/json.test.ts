import { z } from 'zod';
import { parseJsonWith } from '../../core/json';

const Network = z.object({ subnet: z.string().optional(), securityGroups: z.array(z.string()).optional() });

describe('parseJsonWith', () => {
  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['not JSON', '{"subnet": subnet-1}'],
    ['the wrong shape', '{"subnet": 7}'],
    ['JSON of another kind', '["subnet-1"]'],
  ])('gives undefined for text that is %s', (_, text) => {
    expect(parseJsonWith(Network, text)).toBeUndefined();
  });

  it('gives the parsed value, with the schema applied', () => {
    const Defaulted = Network.extend({ securityGroups: z.array(z.string()).default([]) });
    expect(parseJsonWith(Defaulted, '{"subnet":"subnet-1","extra":true}')).toEqual({ subnet: 'subnet-1', securityGroups: [] });
  });
});
