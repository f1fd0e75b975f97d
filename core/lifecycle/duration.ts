/**
 * Karpenter's duration strings (`30s`, `5m`, `720h`, `1h30m`, `Never`) to milliseconds.
 * `Never` is `undefined`: there is no timer to set.
 */
export function durationToMs(duration: string): number | undefined {
  if (duration === 'Never') return undefined;
  const parts = [...duration.matchAll(/([0-9]+)(ms|s|m|h)/g)];
  const consumed = parts.map((p) => p[0]).join('');
  if (parts.length === 0 || consumed !== duration) {
    throw new Error(`invalid duration "${duration}": use e.g. 30s, 5m, 720h, 1h30m or Never`);
  }
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  return parts.reduce((total, [, n, u]) => total + Number(n) * unit[u as keyof typeof unit], 0);
}
