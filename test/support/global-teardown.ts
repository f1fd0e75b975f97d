/** Stops exactly the processes the global setup started, in reverse order. */
export default async function globalTeardown(): Promise<void> {
  const stack = globalThis.__autonodeStack;
  if (!stack) return;
  await stack.stop();
  globalThis.__autonodeStack = undefined;
}
