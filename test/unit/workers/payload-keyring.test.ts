import { PayloadKeyring, loadPayloadKeyring, newPayloadKeyringJson } from '../../../workers/codec/keyring';
import { parseWorkerConfig } from '../../../workers/config';
import { aKey, aKeyringFile } from '../../support/payload-keys';

const json = (value: unknown) => JSON.stringify(value);

describe('payload keyring', () => {
  it('parses keys, their ids and the primary', () => {
    const ring = PayloadKeyring.parse(json(aKeyringFile(['2026-05', '2026-11'])), 'test');
    expect(ring.ids).toEqual(['2026-05', '2026-11']);
    expect(ring.primaryId).toBe('2026-11');
    expect(ring.key('2026-05')?.symmetricKeySize).toBe(32);
    expect(ring.key('nope')).toBeUndefined();
  });

  it.each([
    ['a 16-byte key', { primary: 'a', keys: [{ id: 'a', key: Buffer.alloc(16, 1).toString('base64') }] }, /^src: invalid payload keyring: keys\[0\]\.key: must decode to 32 bytes \(AES-256\)/],
    ['a key that is not base64', { primary: 'a', keys: [{ id: 'a', key: 'not base64!' }] }, /keys\[0\]\.key: must be standard base64/],
    ['duplicate ids', { primary: 'a', keys: [{ id: 'a', key: aKey(1) }, { id: 'b', key: aKey(2) }, { id: 'a', key: aKey(3) }] }, /keys\[2\]\.id: duplicate id "a" \(also keys\[0\]\)/],
    ['a primary that names no key', { primary: 'c', keys: [{ id: 'a', key: aKey(1) }, { id: 'b', key: aKey(2) }] }, /primary: "c" is not the id of any key \(ids: a, b\)/],
    ['an id with a space', { primary: 'a b', keys: [{ id: 'a b', key: aKey(1) }] }, /keys\[0\]\.id: must be letters, digits/],
    ['no keys', { primary: 'a', keys: [] }, /keys: needs at least one key/],
    ['no primary', { keys: [{ id: 'a', key: aKey(1) }] }, /primary: /],
    ['a misspelt field', { primary: 'a', keys: [{ id: 'a', key: aKey(1), kye: 'x' }] }, /keys\[0\]: .*kye/],
  ])('refuses %s, naming the field', (_, file, message) => {
    expect(() => PayloadKeyring.parse(json(file), 'src')).toThrow(message);
  });

  it('never repeats key material in its errors, not even from JSON it cannot parse', () => {
    const secret = aKey(0x41);
    const problems = [
      `{"primary": "a", "keys": [{"id": "a", "key": "${secret}"}`, // cut short
      json({ primary: 'a', keys: [{ id: 'a', key: `${secret}AAAA` }] }), // 35 bytes
      json({ primary: 'b', keys: [{ id: 'a', key: secret }] }),
    ];
    for (const text of problems) {
      let message = '';
      try {
        PayloadKeyring.parse(text, 'AUTONODE_PAYLOAD_KEYS');
      } catch (err) {
        message = String(err);
      }
      expect(message).toMatch(/^Error: AUTONODE_PAYLOAD_KEYS: /);
      expect(message).not.toContain(secret.slice(0, 12));
    }
  });

  describe('loadPayloadKeyring (the environment)', () => {
    const file = json(aKeyringFile(['k1']));

    it('is off when neither variable is set', () => {
      expect(loadPayloadKeyring({})).toBeUndefined();
    });

    it('reads the file AUTONODE_PAYLOAD_KEYS_FILE names, or the JSON in AUTONODE_PAYLOAD_KEYS', () => {
      const read: string[] = [];
      expect(loadPayloadKeyring({ AUTONODE_PAYLOAD_KEYS_FILE: '/keys/payload.json' }, (path) => (read.push(path), file))?.primaryId).toBe('k1');
      expect(read).toEqual(['/keys/payload.json']);
      expect(loadPayloadKeyring({ AUTONODE_PAYLOAD_KEYS: file })?.primaryId).toBe('k1');
    });

    it('refuses both at once, an unreadable file and a bad file, naming the variable (and the path)', () => {
      expect(() => loadPayloadKeyring({ AUTONODE_PAYLOAD_KEYS_FILE: '/k', AUTONODE_PAYLOAD_KEYS: file })).toThrow(/set AUTONODE_PAYLOAD_KEYS_FILE or AUTONODE_PAYLOAD_KEYS, not both/);
      expect(() => loadPayloadKeyring({ AUTONODE_PAYLOAD_KEYS_FILE: '/nonexistent/keys.json' })).toThrow(/^AUTONODE_PAYLOAD_KEYS_FILE: cannot read \/nonexistent\/keys\.json \(ENOENT\)/);
      expect(() => loadPayloadKeyring({ AUTONODE_PAYLOAD_KEYS_FILE: '/k.json' }, () => json({ primary: 'x', keys: [] }))).toThrow(/^AUTONODE_PAYLOAD_KEYS_FILE \(\/k\.json\): invalid payload keyring: keys: needs at least one key/);
      expect(() => loadPayloadKeyring({ AUTONODE_PAYLOAD_KEYS: 'k1=abc' })).toThrow(/^AUTONODE_PAYLOAD_KEYS: not valid JSON/);
    });

    it('is part of the worker configuration', () => {
      const config = parseWorkerConfig({ AUTONODE_PAYLOAD_KEYS_FILE: '/keys/payload.json' });
      expect(config.AUTONODE_PAYLOAD_KEYS_FILE).toBe('/keys/payload.json');
      expect(parseWorkerConfig({}).AUTONODE_PAYLOAD_KEYS_FILE).toBeUndefined();
      expect(() => parseWorkerConfig({ AUTONODE_PAYLOAD_KEYS: '' })).toThrow(/AUTONODE_PAYLOAD_KEYS: /);
    });
  });

  it('newPayloadKeyringJson makes a valid keyring with one random key', () => {
    const a = PayloadKeyring.parse(newPayloadKeyringJson('dev-1'), 'generated');
    expect(a.ids).toEqual(['dev-1']);
    expect(newPayloadKeyringJson('dev-1')).not.toBe(newPayloadKeyringJson('dev-1'));
  });
});
