import {
  CertificatesV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  Watch,
} from '@kubernetes/client-node';

/**
 * The Kubernetes API clients autonode uses against one cluster (guest or management),
 * built from one kubeconfig. Activities receive this as a port; nothing below
 * activities/ constructs clients itself.
 */
export interface KubeClients {
  /** the cluster's API server URL, for messages */
  server: string;
  config: KubeConfig;
  core: CoreV1Api;
  certificates: CertificatesV1Api;
  customObjects: CustomObjectsApi;
  objects: KubernetesObjectApi;
  watch: Watch;
}

export function kubeClientsFromConfig(config: KubeConfig): KubeClients {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster: set current-context');
  return {
    server: cluster.server,
    config,
    core: config.makeApiClient(CoreV1Api),
    certificates: config.makeApiClient(CertificatesV1Api),
    customObjects: config.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(config),
    watch: new Watch(config),
  };
}

export function kubeClientsFromKubeconfigFile(path: string): KubeClients {
  const config = new KubeConfig();
  config.loadFromFile(path);
  return kubeClientsFromConfig(config);
}

/** Kubeconfig content held in memory (e.g. read from a Secret in the management cluster). */
export function kubeClientsFromKubeconfigString(kubeconfig: string): KubeClients {
  const config = new KubeConfig();
  config.loadFromString(kubeconfig);
  return kubeClientsFromConfig(config);
}
