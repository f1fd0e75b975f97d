/** Ends an exhaustive switch: a new union member fails to compile here. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
