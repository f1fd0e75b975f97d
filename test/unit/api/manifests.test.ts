import { parseManifests } from '../../../core/api';

describe('parseManifests', () => {
  const text = [
    'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: first\n',
    'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: broken\nspec: [unclosed\n',
    '',
    'apiVersion: v1\nkind: Pod\nmetadata:\n  name: last\n',
  ].join('---\n');

  it('returns one result per document, and a broken one does not stop the rest', () => {
    const docs = parseManifests(text);
    expect(docs.map((d) => [d.index, d.status, d.kind, d.name])).toEqual([
      [0, 'parsed', 'NodePool', 'first'],
      [1, 'error', 'NodePool', 'broken'],
      [3, 'parsed', 'Pod', 'last'],
    ]);
  });

  it('says where the broken document is', () => {
    const broken = parseManifests(text)[1];
    expect(broken).toEqual(expect.objectContaining({ status: 'error', line: 6, error: expect.stringMatching(/line \d+, column \d+/) }));
  });

  it.each([
    ['duplicate keys', 'kind: A\nkind: B\n', /unique/i],
    ['a scalar document', 'just text\n', /must be a YAML mapping/],
  ])('rejects %s', (_name, doc, error) => {
    const [result] = parseManifests(doc);
    expect(result?.status).toBe('error');
    expect(result?.status === 'error' && result.error).toMatch(error);
  });

  it('returns nothing for a file of comments', () => {
    expect(parseManifests('# nothing here\n')).toEqual([]);
  });
});
