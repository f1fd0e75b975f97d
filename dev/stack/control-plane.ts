import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCertificateAuthority, issueCertificate, type CertificateAuthority } from './certs';
import { renderKubeconfig } from './kubeconfig';
import { ManagedProcess } from './process';
import { answers200 } from './probes';

/**
 * One Kubernetes cluster's control plane on the shared etcd: its own CAs, a
 * kube-apiserver with Node+RBAC authorization and NodeRestriction, and kubeconfigs for
 * the identities that talk to it.
 */
export interface ClusterPki {
  dir: string;
  servingCa: CertificateAuthority;
  clientCa: CertificateAuthority;
  serviceAccountSigner: CertificateAuthority;
  files: {
    servingCaCert: string;
    clientCaCert: string;
    clientCaKey: string;
    serviceAccountCert: string;
    serviceAccountKey: string;
  };
}

export async function createClusterPki(dir: string): Promise<ClusterPki> {
  mkdirSync(dir, { recursive: true });
  const envtestName = { cn: 'envtest-environment', o: ['envtest'] };
  const [servingCa, clientCa, serviceAccountSigner] = await Promise.all([
    createCertificateAuthority(envtestName),
    createCertificateAuthority({ cn: 'autonode-client-ca', o: ['autonode'] }),
    createCertificateAuthority({ cn: 'autonode-service-account-signer', o: ['autonode'] }),
  ]);
  const serving = await issueCertificate(servingCa, {
    subject: { cn: 'localhost', o: ['envtest'] },
    usage: 'server',
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
    ipAddresses: ['127.0.0.1', '10.0.0.1'],
  });
  const files = {
    servingCaCert: join(dir, 'serving-ca.crt'),
    clientCaCert: join(dir, 'client-ca.crt'),
    clientCaKey: join(dir, 'client-ca.key'),
    serviceAccountCert: join(dir, 'sa-signer.crt'),
    serviceAccountKey: join(dir, 'sa-signer.key'),
  };
  const write = (path: string, content: string) => writeFileSync(path, content, { mode: 0o600 });
  write(files.servingCaCert, servingCa.certPem);
  write(files.clientCaCert, clientCa.certPem);
  write(files.clientCaKey, clientCa.keyPem);
  write(files.serviceAccountCert, serviceAccountSigner.certPem);
  write(files.serviceAccountKey, serviceAccountSigner.keyPem);
  // kube-apiserver picks apiserver.crt/key up from --cert-dir.
  write(join(dir, 'apiserver.crt'), serving.certPem);
  write(join(dir, 'apiserver.key'), serving.keyPem);
  return { dir, servingCa, clientCa, serviceAccountSigner, files };
}

/** Writes a kubeconfig for a client-certificate identity (CN = user, O = groups). */
export async function writeIdentityKubeconfig(options: {
  pki: ClusterPki;
  server: string;
  clusterName: string;
  user: string;
  groups?: string[];
  path: string;
}): Promise<string> {
  const cert = await issueCertificate(options.pki.clientCa, {
    subject: { cn: options.user, o: options.groups ?? [] },
    usage: 'client',
  });
  writeFileSync(
    options.path,
    renderKubeconfig({
      clusterName: options.clusterName,
      server: options.server,
      caPem: options.pki.servingCa.certPem,
      user: options.user,
      certPem: cert.certPem,
      keyPem: cert.keyPem,
    }),
    { mode: 0o600 },
  );
  return options.path;
}

/**
 * An audit policy that records, at Metadata level (who, verb, resource, namespace, name,
 * response code and the authorizer's decision — never a body), every request made by a
 * ServiceAccount, and nothing else. On the management cluster only autonode's workers
 * running as their ServiceAccount (test/integration/worker-rbac.test.ts) are
 * ServiceAccounts — the stack's own clients use certificates — so the log costs nothing
 * in every other run. RequestReceived is left out: ResponseStarted/ResponseComplete carry
 * the same and the outcome.
 */
export const SERVICE_ACCOUNT_AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
`;

export interface ApiserverAudit {
  /** JSON lines, one audit.k8s.io/v1 Event each */
  logPath: string;
  policyPath: string;
}

/** Writes SERVICE_ACCOUNT_AUDIT_POLICY beside `logPath` and returns where both go. */
export function serviceAccountAudit(dir: string, name: string): ApiserverAudit {
  mkdirSync(dir, { recursive: true });
  const policyPath = join(dir, `${name}-audit-policy.yaml`);
  writeFileSync(policyPath, SERVICE_ACCOUNT_AUDIT_POLICY);
  return { logPath: join(dir, `${name}-audit.log`), policyPath };
}

export function kubeApiserver(options: {
  name: string;
  binary: string;
  pki: ClusterPki;
  port: number;
  etcdUrl: string;
  etcdPrefix: string;
  logDir: string;
  /** the API server's own record of requests (serviceAccountAudit) */
  audit?: ApiserverAudit;
}): ManagedProcess {
  const { pki, port } = options;
  // Blocking mode (the log backend's default, said here because it matters): an event is
  // written before its response is sent, so a client that got its answer finds it in the log.
  const audit = options.audit
    ? [`--audit-policy-file=${options.audit.policyPath}`, `--audit-log-path=${options.audit.logPath}`, '--audit-log-format=json', '--audit-log-mode=blocking', '--audit-log-maxsize=100', '--audit-log-maxbackup=1']
    : [];
  const server = `https://127.0.0.1:${port}`;
  return new ManagedProcess({
    name: options.name,
    command: options.binary,
    args: [
      `--etcd-servers=${options.etcdUrl}`,
      `--etcd-prefix=${options.etcdPrefix}`,
      `--cert-dir=${pki.dir}`,
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      // Node authorizer + NodeRestriction: a kubelet may only touch its own Node, so the
      // simulated kubelet behaves like a real one and CSR approval is the only way in.
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      // No service-account controller runs for the management cluster, and pods in the
      // guest need no token volumes under kwok: don't require a default ServiceAccount.
      '--disable-admission-plugins=ServiceAccount',
      '--enable-bootstrap-token-auth=true',
      `--client-ca-file=${pki.files.clientCaCert}`,
      `--service-account-issuer=${server}`,
      `--service-account-key-file=${pki.files.serviceAccountCert}`,
      `--service-account-signing-key-file=${pki.files.serviceAccountKey}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      // A dev/test stack on 2 cores: no fairness queueing that could stall a burst of tests.
      '--enable-priority-and-fairness=false',
      '--max-requests-inflight=0',
      '--max-mutating-requests-inflight=0',
      '--profiling=false',
      ...audit,
      '--v=1',
    ],
    logFile: join(options.logDir, `${options.name}.log`),
    ready: () => answers200(`${server}/readyz`, { ca: pki.servingCa.certPem }),
    startTimeoutMs: 120_000,
  });
}
