/** "a, b, c, d, e and 3 more": a message names a few things (types, claims), not sixty. */
export function someNames(names: readonly string[], shown = 5): string {
  return names.length <= shown ? names.join(', ') : `${names.slice(0, shown).join(', ')} and ${names.length - shown} more`;
}
