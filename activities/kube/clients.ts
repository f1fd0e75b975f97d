import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import {
  ApiException,
  CertificatesV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  ServerConfiguration,
  Watch,
  HttpMethod,
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
  /** Any other generated API group (PolicyV1Api, StorageV1Api, …) on the same configuration: the deadline, the kept connections. */
  make<T>(api: new (configuration: Configuration) => T): T;
  /**
   * GET `path` (e.g. `/api/v1/pods`), the JSON as the API server sent it, on the same
   * configuration. For large lists read as plain data: the typed clients turn every pod
   * into class instances with Dates (measured: 2,000 pods, 3 MB, took 0.2–1.2 s to
   * deserialize and 0.4–0.7 s more to turn back into plain JSON, against 0.08–0.3 s to
   * parse). A status outside 2xx throws ApiException with its code, as the typed clients do.
   */
  getJson(path: string, query?: Readonly<Record<string, string>>): Promise<unknown>;
}

/**
 * client-node 1.x gives every request an agent of its own, so every request opened a new
 * TCP connection and TLS session: 4–5 ms of CPU per request between client and server on
 * this machine (`node` both ends, a 2048-bit key), against 0.4 ms on a kept connection. At
 * hundreds of requests a second (claims polling their registration) that was most of a
 * core. So the agent client-node made is swapped for one kept per cluster and TLS identity
 * (CA, client certificate and key, verification, server name: a rotated certificate gets
 * an agent of its own), with keep-alive. Idle connections close after IDLE_SOCKET_MS, well
 * before kube-apiserver's 90 s idle timeout, so a request is never sent on a connection the
 * server is closing. Proxy agents are left as they are.
 */
const IDLE_SOCKET_MS = 30_000;

function keptAgents(): (made: unknown) => unknown {
  const kept = new Map<string, http.Agent>();
  return (made) => {
    if (!(made instanceof http.Agent) || (made.constructor !== http.Agent && made.constructor !== https.Agent)) return made;
    const o = (made as http.Agent & { options: https.AgentOptions }).options;
    const identity = createHash('sha256')
      .update(JSON.stringify([made.constructor === https.Agent, o.ca, o.cert, o.key, o.pfx, o.passphrase, o.rejectUnauthorized, o.servername].map((v) => (Buffer.isBuffer(v) ? v.toString('base64') : v))))
      .digest('base64');
    let agent = kept.get(identity);
    if (agent === undefined) {
      const Kind = made.constructor as typeof https.Agent;
      agent = new Kind({ ...o, keepAlive: true, timeout: IDLE_SOCKET_MS });
      // a rotated identity replaces the old agent; its idle connections close on their own
      if (kept.size >= 4) kept.clear();
      kept.set(identity, agent);
    }
    return agent;
  };
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
  const keep = keptAgents();
  const configuration: Configuration = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: config },
    promiseMiddleware: [
      {
        pre: async (context) => {
          if (!context.getSignal()) context.setSignal(AbortSignal.timeout(timeoutMs));
          const agent = context.getAgent();
          if (agent !== undefined) context.setAgent(keep(agent) as typeof agent);
          return context;
        },
        post: async (context) => context,
      },
      ...(o.middleware ?? []),
    ],
  });
  const objects = ObjectApi.withDefaultNamespace(configuration, config);
  // the generated clients' request, minus the model: the same auth, middleware (deadline, kept connections) and error
  const getJson = async (path: string, query: Readonly<Record<string, string>> = {}): Promise<unknown> => {
    let context = configuration.baseServer.makeRequestContext(path, HttpMethod.GET);
    context.setHeaderParam('Accept', 'application/json');
    for (const [name, value] of Object.entries(query)) context.setQueryParam(name, value);
    await configuration.authMethods.default?.applySecurityAuthentication(context);
    for (const middleware of configuration.middleware) context = await middleware.pre(context).toPromise();
    let response = await configuration.httpApi.send(context).toPromise();
    for (const middleware of [...configuration.middleware].reverse()) response = await middleware.post(response).toPromise();
    const text = await response.body.text();
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299) throw new ApiException(response.httpStatusCode, `GET ${path}: HTTP ${response.httpStatusCode}`, text, response.headers);
    return JSON.parse(text) as unknown;
  };
  return {
    server: cluster.server,
    config,
    core: new CoreV1Api(configuration),
    certificates: new CertificatesV1Api(configuration),
    customObjects: new CustomObjectsApi(configuration),
    objects,
    watch: new Watch(config),
    make: (api) => new api(configuration),
    getJson,
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
