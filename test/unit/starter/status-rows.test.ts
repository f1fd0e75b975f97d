// `autonode status <ns>/<name>`: a guest's pools and claims as rows.
import { age, guestRows } from '../../../starter/commands/cluster';

const now = Date.parse('2026-11-24T12:00:00Z');
const claim = (name: string, pool: string, o: { price?: string; conditions?: string[]; deleting?: boolean; created?: string } = {}) => ({
  metadata: {
    name,
    creationTimestamp: o.created ?? '2026-11-24T11:50:00Z',
    ...(o.deleting ? { deletionTimestamp: '2026-11-24T11:59:00Z' } : {}),
    labels: { 'karpenter.sh/nodepool': pool, 'node.kubernetes.io/instance-type': 'c6a.xlarge', 'topology.kubernetes.io/zone': 'us-east-1a', 'karpenter.sh/capacity-type': 'spot' },
    annotations: (o.price ? { 'autonode.io/planned-price': o.price } : {}) as Record<string, string>,
  },
  status: { conditions: (o.conditions ?? []).map((type) => ({ type, status: 'True' })) },
});
const pool = (name: string, nodes?: string) => ({ metadata: { name }, spec: { template: { spec: { nodeClassRef: { name: 'default' } } } }, status: nodes ? { resources: { nodes } } : {} });

it('claims: phase from conditions, labels, planned price, age; pools: their claims and $/h', () => {
  const rows = guestRows(
    [pool('spot', '2'), pool('empty')],
    [claim('spot-b', 'spot', { price: '0.0612', conditions: ['Launched', 'Registered', 'Initialized'] }), claim('spot-a', 'spot', { price: '0.0612', conditions: ['Launched'] }), claim('by-hand', 'spot', { deleting: true })],
    now,
  );
  expect(rows.claims).toEqual([
    { name: 'by-hand', pool: 'spot', phase: 'Deleting', type: 'c6a.xlarge', zone: 'us-east-1a', capacityType: 'spot', age: '10m' },
    { name: 'spot-a', pool: 'spot', phase: 'Launched', type: 'c6a.xlarge', zone: 'us-east-1a', capacityType: 'spot', pricePerHour: 0.0612, age: '10m' },
    { name: 'spot-b', pool: 'spot', phase: 'Initialized', type: 'c6a.xlarge', zone: 'us-east-1a', capacityType: 'spot', pricePerHour: 0.0612, age: '10m' },
  ]);
  expect(rows.pools).toEqual([
    { name: 'empty', nodeClass: 'default', nodes: '0', claims: 0, pricePerHour: 0 },
    { name: 'spot', nodeClass: 'default', nodes: '2', claims: 3, pricePerHour: 0.1224 },
  ]);
});

it.each([
  ['2026-11-24T11:59:15Z', '45s'],
  ['2026-11-24T11:48:00Z', '12m'],
  ['2026-11-24T09:00:00Z', '3h'],
  ['2026-11-21T12:00:00Z', '3d'],
  [undefined, '-'],
])('age of %s is %s', (from, expected) => {
  expect(age(from, now)).toBe(expected);
});
