/**
 * Kubernetes-style feature gates (`--feature-gates=Autoprovision=true,…`), read once at the
 * edge. Unknown gates and values other than true/false stop the worker with a message that
 * names the gate and the fix, as kube-apiserver does.
 */
export const FEATURE_GATES = {
  /** `spec.autoNode` on a HostedCluster starts its enablement (else only `autonode enable` does) */
  Autoprovision: false,
} as const;

export type FeatureGates = { -readonly [K in keyof typeof FEATURE_GATES]: boolean };

export function parseFeatureGates(text: string | undefined, source = '--feature-gates'): FeatureGates {
  const gates: FeatureGates = { ...FEATURE_GATES };
  for (const entry of (text ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const [name, value, ...rest] = entry.split('=').map((p) => p.trim());
    if (!name || value === undefined || rest.length > 0) throw new Error(`${source}: "${entry}" is not <Gate>=true|false (e.g. ${source}=Autoprovision=true)`);
    if (!isGate(name)) throw new Error(`${source}: unknown feature gate "${name}"; known gates: ${Object.keys(FEATURE_GATES).join(', ')}`);
    if (value !== 'true' && value !== 'false') throw new Error(`${source}: ${name}=${value}: the value must be true or false`);
    gates[name] = value === 'true';
  }
  return gates;
}

const isGate = (name: string): name is keyof FeatureGates => Object.hasOwn(FEATURE_GATES, name);
