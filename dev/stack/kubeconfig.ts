import { stringify } from 'yaml';

export interface KubeconfigOptions {
  clusterName: string;
  server: string;
  caPem: string;
  user: string;
  certPem: string;
  keyPem: string;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** A self-contained kubeconfig (data embedded, no file references) for one client certificate. */
export function renderKubeconfig(o: KubeconfigOptions): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: o.clusterName, cluster: { server: o.server, 'certificate-authority-data': b64(o.caPem) } }],
    users: [{ name: o.user, user: { 'client-certificate-data': b64(o.certPem), 'client-key-data': b64(o.keyPem) } }],
    contexts: [{ name: o.clusterName, context: { cluster: o.clusterName, user: o.user } }],
    'current-context': o.clusterName,
  });
}
