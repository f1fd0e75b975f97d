import {
  CertificatesV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  ServerConfiguration,
  Watch,
  createConfiguration,
  type Configuration,
  type Middleware,
} from '@kubernetes/client-node';

/**
 * The longest one API request may take (watches excepted). The client sets no limit of its
 * own: a request that never answers would hold its activity until the activity's timeout
 * (minutes) instead of failing and being retried. A list of 20k pods reads in seconds.
 */
export const KUBE_REQUEST_TIMEOUT_MS = 60_000;

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

/** KubernetesObjectApi.makeApiClient, on a given configuration. */
class ObjectApi extends KubernetesObjectApi {
  static withDefaultNamespace(configuration: Configuration, config: KubeConfig): KubernetesObjectApi {
    const api = new ObjectApi(configuration);
    api.setDefaultNamespace(config);
    return api;
  }
}

/** `middleware`: more request/response hooks, after the deadline (e.g. noticing a 401). */
export function kubeClientsFromConfig(config: KubeConfig, o: { requestTimeoutMs?: number; middleware?: Middleware[] } = {}): KubeClients {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster: set current-context');
  // KubeConfig.makeApiClient's configuration, plus a deadline on every request
  const timeoutMs = o.requestTimeoutMs ?? KUBE_REQUEST_TIMEOUT_MS;
  const configuration: Configuration = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: config },
    promiseMiddleware: [
      {
        pre: async (context) => {
          if (!context.getSignal()) context.setSignal(AbortSignal.timeout(timeoutMs));
          return context;
        },
        post: async (context) => context,
      },
      ...(o.middleware ?? []),
    ],
  });
  const objects = ObjectApi.withDefaultNamespace(configuration, config);
  return {
    server: cluster.server,
    config,
    core: new CoreV1Api(configuration),
    certificates: new CertificatesV1Api(configuration),
    customObjects: new CustomObjectsApi(configuration),
    objects,
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
