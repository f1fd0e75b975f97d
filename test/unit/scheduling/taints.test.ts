import { toleratesAll, toleratesTaint, type Taint, type Toleration } from '../../../core/scheduling/taints';

function aTaint(taint: Partial<Taint> = {}): Taint {
  return { key: 'dedicated', value: 'gpu', effect: 'NoSchedule', ...taint };
}

describe('taints and tolerations', () => {
  it.each<[string, Toleration, Taint, boolean]>([
    ['Equal, same key, value and effect', { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }, aTaint(), true],
    ['operator defaults to Equal', { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, aTaint(), true],
    ['Equal with a different value', { key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoSchedule' }, aTaint(), false],
    ['Equal without value vs a valueless taint', { key: 'dedicated', operator: 'Equal' }, aTaint({ value: undefined }), true],
    ['Equal without value vs a valued taint', { key: 'dedicated', operator: 'Equal' }, aTaint(), false],
    ['Exists ignores the value', { key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }, aTaint(), true],
    ['Exists with another key', { key: 'other', operator: 'Exists' }, aTaint(), false],
    ['empty key with Exists tolerates everything', { operator: 'Exists' }, aTaint({ key: 'anything', effect: 'NoExecute' }), true],
    ['empty key with Exists and an effect only that effect', { operator: 'Exists', effect: 'NoExecute' }, aTaint(), false],
    ['empty effect matches every effect', { key: 'dedicated', operator: 'Exists', effect: '' }, aTaint({ effect: 'NoExecute' }), true],
    ['missing effect matches every effect', { key: 'dedicated', value: 'gpu' }, aTaint({ effect: 'PreferNoSchedule' }), true],
    ['different effect', { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, aTaint({ effect: 'NoSchedule' }), false],
  ])('%s', (_name, toleration, taint, expected) => {
    expect(toleratesTaint(toleration, taint)).toBe(expected);
  });

  it('needs every taint tolerated, PreferNoSchedule included, and lists the ones left', () => {
    const taints = [aTaint(), aTaint({ key: 'spot', value: undefined, effect: 'PreferNoSchedule' }), aTaint({ key: 'zone', value: 'a', effect: 'NoExecute' })];
    expect(toleratesAll(taints, [{ key: 'dedicated', operator: 'Exists' }])).toEqual({
      ok: false,
      untolerated: [taints[1], taints[2]],
      reason: 'did not tolerate taints spot:PreferNoSchedule, zone=a:NoExecute',
    });
    expect(toleratesAll(taints, [{ operator: 'Exists' }])).toEqual({ ok: true });
    expect(toleratesAll([], [])).toEqual({ ok: true });
  });
});
