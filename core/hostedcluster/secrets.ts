/** The namespace autonode's workers run in on the management cluster (k8s/worker/worker.yaml). */
export const AUTONODE_NAMESPACE = 'autonode-system';

/**
 * The management Secret holding the kubeconfig of autonode's own guest identity (written by
 * the enablement). It lives in autonode's own namespace, not beside the HostedCluster, so
 * that the workers write Secrets only there and merely read them in HyperShift's namespaces
 * (docs/adr/0008-worker-management-rbac.md). The name holds both parts of the HostedCluster's
 * name, dot-separated: a namespace has no dots, so no two HostedClusters share one.
 */
export const autonodeKubeconfigSecret = (hc: { namespace: string; name: string }) => ({ namespace: AUTONODE_NAMESPACE, name: `${hc.namespace}.${hc.name}.autonode-kubeconfig`, key: 'kubeconfig' });
