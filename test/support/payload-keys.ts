import { PayloadKeyring, type PayloadKeyringFile } from '../../workers/codec/keyring';

/** A key's base64 value: 32 copies of one byte, so a test can tell keys apart by name. */
export const aKey = (fill: number): string => Buffer.alloc(32, fill).toString('base64');

/** Keyring JSON of `ids` (the last primary unless said), each key derived from its id's last character. */
export function aKeyringFile(ids: string[], primary = ids[ids.length - 1]!, keyOf = (id: string) => aKey(id.charCodeAt(id.length - 1))): PayloadKeyringFile {
  return { primary, keys: ids.map((id) => ({ id, key: keyOf(id) })) };
}

export function aKeyring(ids: string[], primary?: string, keyOf?: (id: string) => string): PayloadKeyring {
  return PayloadKeyring.from(aKeyringFile(ids, primary, keyOf));
}
