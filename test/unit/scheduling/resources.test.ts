import {
  addResources, clampAtZero, fits, formatResourceList, maxResources, parseResourceList, resourceList, subtractResources,
} from '../../../core/scheduling/resources';

describe('resource lists', () => {
  it('adds, subtracts and takes the maximum key by key', () => {
    const a = resourceList({ cpu: '1', memory: '1Gi' });
    const b = resourceList({ cpu: '250m', pods: '1' });
    expect(formatResourceList(addResources(a, b))).toEqual({ cpu: '1250m', memory: '1Gi', pods: '1' });
    expect(formatResourceList(subtractResources(a, b))).toEqual({ cpu: '750m', memory: '1Gi', pods: '-1' });
    expect(formatResourceList(maxResources(a, b))).toEqual({ cpu: '1', memory: '1Gi', pods: '1' });
    expect(formatResourceList(clampAtZero(subtractResources(b, a)))).toEqual({ cpu: '0', memory: '0', pods: '1' });
  });

  it('prints memory and storage in binary suffixes, the rest in decimal', () => {
    const list = resourceList({ memory: '7238320128', 'ephemeral-storage': '18253611008', cpu: '1.93', 'hugepages-2Mi': '4194304', 'nvidia.com/gpu': '1' });
    expect(formatResourceList(list)).toEqual({
      cpu: '1930m', 'ephemeral-storage': '17Gi', 'hugepages-2Mi': '4Mi', memory: '6903Mi', 'nvidia.com/gpu': '1',
    });
  });

  it('names the resource whose quantity is malformed', () => {
    expect(parseResourceList({ cpu: '1', memory: '1GB' })).toEqual({ ok: false, reason: expect.stringContaining('resource memory') });
  });

  it('fits when every request is within what is available', () => {
    expect(fits(resourceList({ cpu: '1', memory: '1Gi' }), resourceList({ cpu: '1930m', memory: '6903Mi', pods: '29' }))).toEqual({ ok: true });
  });

  it('does not fit, naming every exceeded resource, when a resource is missing or short', () => {
    const result = fits(resourceList({ cpu: '2', 'nvidia.com/gpu': '1' }), resourceList({ cpu: '1930m', memory: '6903Mi' }));
    expect(result).toEqual({
      ok: false,
      exceeded: ['cpu', 'nvidia.com/gpu'],
      reason: 'requests exceed available: cpu 2 > 1930m, nvidia.com/gpu 1 > 0',
    });
  });
});
