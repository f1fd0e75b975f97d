/**
 * Clients whose bearer token follows a kubeconfig kept in a Secret — autonode's guest
 * identity, which the enablement workflow renews at half its life. Every request asks the
 * token source for the current token; the source reads the Secret again when its last read
 * is older than `maxAgeMs`, or when the API server answered 401 (the token was revoked or
 * expired before the age check came round). The request that met the 401 still fails
 * (its activity retries); the next one carries the renewed token.
 *
 * Rejected: rebuilding the clients on each renewal — callers hold them (watches, the
 * cloud provider built beside them); a token that changes under them does not disturb them.
 * Rejected: caching per cluster forever (the first cut) — clients then outlive their token.
 */
import { KubeConfig, type Middleware, type User } from '@kubernetes/client-node';
import { kubeClientsFromConfig, type KubeClients } from './clients';

/** The parts of a kubeconfig that decide which cluster is called (a change needs new clients, not just a token). */
export interface KubeconfigTarget {
  server: string;
  caData: string;
  skipTLSVerify: boolean;
}

export interface SecretKubeconfig {
  target: KubeconfigTarget;
  /** absent: the kubeconfig authenticates otherwise (client certificate), and is used as it is */
  token?: string;
  text: string;
}

export function parseSecretKubeconfig(text: string, source: string): SecretKubeconfig {
  const config = new KubeConfig();
  config.loadFromString(text);
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error(`${source}: the kubeconfig has no current cluster (set current-context)`);
  const token = config.getCurrentUser()?.token;
  return { target: { server: cluster.server, caData: cluster.caData ?? '', skipTLSVerify: cluster.skipTLSVerify }, ...(token ? { token } : {}), text };
}

export const sameTarget = (a: KubeconfigTarget, b: KubeconfigTarget) => a.server === b.server && a.caData === b.caData && a.skipTLSVerify === b.skipTLSVerify;

export interface TokenSourceOptions {
  /** reads and parses the Secret (e.g. from the management cluster) */
  read: () => Promise<SecretKubeconfig>;
  /** the first read, already done by the caller */
  initial: SecretKubeconfig;
  /** re-read when the last read is older than this (default 60 s: far below any half-life) */
  maxAgeMs?: number;
  now?: () => number;
  /** a re-read by age failed; the last token is kept (a management API blip must not fail guest calls) */
  onStaleReadFailed?: (error: unknown) => void;
}

/** The current token of one Secret, re-read by age and after a 401; single flight. */
export class SecretTokenSource {
  private current: SecretKubeconfig;
  private readAt: number;
  private unauthorizedSeen = false;
  private reading: Promise<SecretKubeconfig> | undefined;
  private readonly now: () => number;
  private readonly maxAgeMs: number;

  constructor(private readonly options: TokenSourceOptions) {
    this.now = options.now ?? Date.now;
    this.maxAgeMs = options.maxAgeMs ?? 60_000;
    this.current = options.initial;
    this.readAt = this.now();
  }

  /** The latest kubeconfig read (its target decides whether existing clients still fit). */
  async latest(): Promise<SecretKubeconfig> {
    if (this.unauthorizedSeen) return this.reread(true);
    if (this.now() - this.readAt >= this.maxAgeMs) return this.reread(false);
    return this.current;
  }

  async token(): Promise<string | undefined> {
    return (await this.latest()).token;
  }

  /** The API server refused the token: read the Secret again before the next request. */
  unauthorized(): void {
    this.unauthorizedSeen = true;
  }

  private reread(afterUnauthorized: boolean): Promise<SecretKubeconfig> {
    this.reading ??= this.options
      .read()
      .then(
        (read) => {
          this.current = read;
          this.readAt = this.now();
          this.unauthorizedSeen = false;
          return read;
        },
        (error: unknown) => {
          // after a 401 the old token is known bad: say so; after an age check it may be fine
          if (afterUnauthorized) throw error;
          this.readAt = this.now();
          this.options.onStaleReadFailed?.(error);
          return this.current;
        },
      )
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}

const AUTH_PROVIDER = 'autonode-secret-token';

/**
 * A KubeConfig that takes its bearer token from the source on every request (REST calls
 * and watches); its API clients tell the source about a 401 (kubeClientsFollowingToken).
 */
class TokenSourceKubeConfig extends KubeConfig {
  constructor(private readonly tokenSource: SecretTokenSource) {
    super();
    this.addAuthenticator({
      isAuthProvider: (user: User) => (user.authProvider as { name?: unknown } | undefined)?.name === AUTH_PROVIDER,
      applyAuthentication: async (_user, opts) => {
        const token = await this.tokenSource.token();
        if (token) opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
      },
    });
  }
}

/** Clients for a token kubeconfig read from a Secret, following the source's token. */
export function kubeClientsFollowingToken(initial: SecretKubeconfig, source: SecretTokenSource): KubeClients {
  if (!initial.token) {
    const plain = new KubeConfig();
    plain.loadFromString(initial.text);
    return kubeClientsFromConfig(plain);
  }
  const parsed = new KubeConfig();
  parsed.loadFromString(initial.text);
  const user = parsed.getCurrentUser();
  const config = new TokenSourceKubeConfig(source);
  config.loadFromOptions({
    clusters: parsed.clusters,
    contexts: parsed.contexts,
    currentContext: parsed.currentContext,
    // the token is the source's, asked for on each request; nothing else of the user is kept
    users: parsed.users.map((u) => (u.name === user?.name ? { name: u.name, authProvider: { name: AUTH_PROVIDER } } : u)),
  });
  // the request that met a 401 still fails; the source re-reads the Secret before the next
  const reportUnauthorized: Middleware = {
    pre: async (context) => context,
    post: async (response) => {
      if (response.httpStatusCode === 401) source.unauthorized();
      return response;
    },
  };
  return kubeClientsFromConfig(config, { middleware: [reportUnauthorized] });
}
