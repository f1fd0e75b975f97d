/** The management Secret holding the kubeconfig of autonode's own guest identity (written by the enablement). */
export const autonodeKubeconfigSecret = (hc: { namespace: string; name: string }) => ({ namespace: hc.namespace, name: `${hc.name}-autonode-kubeconfig`, key: 'kubeconfig' });
