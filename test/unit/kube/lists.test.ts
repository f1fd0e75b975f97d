import { z } from 'zod';
import { listItems, parseListItems } from '../../../activities/kube/lists';

describe('Kubernetes list bodies', () => {
  const Pod = z.object({ metadata: z.object({ name: z.string() }), spec: z.object({ nodeName: z.string().optional() }).optional() });

  it('returns the items of a list, and refuses a body that is not one', () => {
    expect(listItems({ kind: 'PodList', items: [{ a: 1 }, { b: 2 }] })).toEqual([{ a: 1 }, { b: 2 }]);
    expect(listItems({ items: [] })).toEqual([]);
    expect(() => listItems({ kind: 'Status', message: 'forbidden' })).toThrow(/items/);
    expect(() => listItems(undefined)).toThrow();
  });

  it('parses every item with the schema and keeps the raw items beside them', () => {
    const raw = [{ metadata: { name: 'a', uid: 'u1' }, spec: { nodeName: 'n1' } }, { metadata: { name: 'b' } }];
    const out = parseListItems(Pod, { items: raw }, 'Pod');
    expect(out.items).toEqual([{ metadata: { name: 'a' }, spec: { nodeName: 'n1' } }, { metadata: { name: 'b' } }]);
    expect(out.raw).toEqual(raw);
  });

  it('fails the whole list on one item it cannot read, naming the kind and the index (never drops it)', () => {
    const list = { items: [{ metadata: { name: 'a' } }, { metadata: { name: 7 } }, { metadata: { name: 'c' } }] };
    expect(() => parseListItems(Pod, list, 'Pod')).toThrow(/^Pod list: item 1 does not parse/);
  });
});
