/**
 * A simulated kubelet for one EC2 instance, doing what a real one does between boot and
 * serving, in the real order and with real credentials:
 *   1. as the node bootstrapper, submit the kubelet client CSR (CN system:node:<dns>, O
 *      system:nodes, signer kube-apiserver-client-kubelet);
 *   2. wait until someone approves it and the controller-manager signs it;
 *   3. with that certificate, create its own Node (the Node authorizer and NodeRestriction
 *      check it as they would a machine) and set its status;
 *   4. as the node, submit the kubelet serving CSR for its DNS name and IP.
 * kwok then keeps the Node Ready. forgeCsr() submits the requests a compromised or
 * confused machine might, for tests of the approver.
 */
import { type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { Signers, nodeUsername, NODES_GROUP } from '../../core/csr/csr';
import { assertNever } from '../../core/assert';
import { isConflict } from '../../activities/kube/errors';
import { kubeClientsFromConfig, type KubeClients } from '../../activities/kube/clients';
import { certificateKubeConfig, type ClusterAccess } from './identity';
import { bootstrapCsrName, createCsrPem, generateKubeletKey, type CsrSubject, type KubeletKey } from './pki';
import { submitCsr, waitForCertificate } from './csr-requests';
import { nodeObjectOf, nodeStatusOf, statusMatches, type SimulatedInstance } from './node-object';

export const CLIENT_USAGES = ['digital signature', 'client auth'];
export const SERVING_USAGES = ['digital signature', 'server auth'];

export type ForgedCsrKind =
  /** a client CSR for this node from a ServiceAccount that is not the bootstrapper */
  | 'wrong-requester'
  /**
   * the bootstrapper asking for a client certificate for a node that is not this instance
   * (FOREIGN_NODE_NAME, or `foreignNodeName`): autonode knows no such node and leaves it
   */
  | 'foreign-node-name'
  /** this node asking for a certificate in another node's name: NodeRestriction refuses it (403) */
  | 'foreign-node-name-as-node'
  /** this node asking for a serving certificate that also names an IP not its own */
  | 'foreign-ip-san'
  /** this node asking for a serving certificate that could also authenticate clients */
  | 'extra-usages'
  /** the bootstrapper asking for another client certificate once the node is registered */
  | 'second-client-csr';

export const FOREIGN_IP = '10.9.9.9';
export const FOREIGN_NODE_NAME = 'ip-10-254-0-1.ec2.internal';

export interface SimulatedKubeletOptions {
  instance: SimulatedInstance;
  /** API server URL and serving CA of the guest cluster */
  guest: ClusterAccess;
  /** the node bootstrapper's credentials (see ensureBootstrapIdentity) */
  bootstrap: KubeConfig;
  /** an unrelated identity allowed to create CSRs, for forgeCsr('wrong-requester') */
  forger?: KubeConfig;
  pollMs?: number;
  /**
   * What the machine keeps on disk across kubelet restarts (the fleet keeps one per
   * instance); without it each kubelet starts from an empty disk.
   */
  disk?: KubeletDisk;
}

/**
 * A machine's /var/lib/kubelet/pki: the bootstrap key is written before the client CSR is
 * made (so a restarted kubelet asks again under the same name), the client certificate once
 * it is issued (so a restarted kubelet does not bootstrap again).
 */
export interface KubeletDisk {
  bootstrapKey?: KubeletKey;
  clientCsrName?: string;
  clientCertificate?: { certPem: string; keyPem: string };
}

export type KubeletPhase = 'new' | 'awaiting-client-certificate' | 'registering' | 'registered' | 'serving-csr-submitted' | 'stopped' | 'failed';

/** Epoch milliseconds at each step, for reports and benchmarks (not for assertions). */
export interface KubeletTimings {
  started?: number;
  clientCsrSubmitted?: number;
  clientCertificateIssued?: number;
  nodeCreated?: number;
  servingCsrSubmitted?: number;
}

export interface KubeletRun {
  nodeName: string;
  clientCsrName: string;
  servingCsrName: string;
  timings: KubeletTimings;
}

export class SimulatedKubelet {
  readonly instance: SimulatedInstance;
  readonly nodeName: string;
  readonly timings: KubeletTimings = {};
  private phaseValue: KubeletPhase = 'new';
  private nodeClientsValue: KubeClients | undefined;
  private readonly bootstrapClients: KubeClients;
  private readonly abort = new AbortController();
  private readonly disk: KubeletDisk;

  constructor(private readonly options: SimulatedKubeletOptions) {
    this.instance = options.instance;
    this.disk = options.disk ?? {};
    this.nodeName = options.instance.privateDnsName;
    this.bootstrapClients = kubeClientsFromConfig(options.bootstrap);
  }

  get phase(): KubeletPhase {
    return this.phaseValue;
  }

  /** Clients authenticated by the node's own client certificate (after step 2). */
  get nodeClients(): KubeClients {
    if (!this.nodeClientsValue) throw new Error(`kubelet ${this.nodeName} has no client certificate yet`);
    return this.nodeClientsValue;
  }

  /** Runs steps 1–4; resolves once the serving CSR is submitted. */
  async run(): Promise<KubeletRun> {
    this.timings.started = Date.now();
    try {
      const clientCsrName = await this.obtainClientCertificate();
      await this.register();
      const servingCsrName = await this.requestServingCertificate();
      return { nodeName: this.nodeName, clientCsrName, servingCsrName, timings: { ...this.timings } };
    } catch (err) {
      this.phaseValue = this.abort.signal.aborted ? 'stopped' : 'failed';
      throw err;
    }
  }

  /** Ends any wait in progress; run() then rejects. */
  stop(): void {
    this.abort.abort(new Error(`simulated kubelet ${this.nodeName} stopped`));
  }

  /** Waits for the serving CSR to be approved and signed; returns the certificate PEM. */
  waitForServingCertificate(csrName: string): Promise<string> {
    return waitForCertificate(this.nodeClients.certificates, csrName, this.waitOptions());
  }

  private async obtainClientCertificate(): Promise<string> {
    const disk = this.disk;
    if (!disk.clientCertificate || !disk.clientCsrName) {
      disk.bootstrapKey ??= await generateKubeletKey();
      const key = disk.bootstrapKey;
      const subject = this.nodeSubject();
      const name = await submitCsr(this.bootstrapClients.certificates, {
        name: await bootstrapCsrName(key, subject, CLIENT_USAGES),
        signerName: Signers.kubeletClient,
        usages: CLIENT_USAGES,
        requestPem: await createCsrPem(key, subject),
        signal: this.abort.signal,
      });
      this.timings.clientCsrSubmitted = Date.now();
      this.phaseValue = 'awaiting-client-certificate';
      // Only the bootstrapper's credentials exist yet; it may read its own CSR's status.
      const certPem = await waitForCertificate(this.bootstrapClients.certificates, name, this.waitOptions());
      disk.clientCertificate = { certPem, keyPem: key.keyPem };
      disk.clientCsrName = name;
      this.timings.clientCertificateIssued = Date.now();
    }
    this.nodeClientsValue = kubeClientsFromConfig(certificateKubeConfig(this.options.guest, nodeUsername(this.nodeName), disk.clientCertificate));
    return disk.clientCsrName;
  }

  private async register(): Promise<void> {
    this.phaseValue = 'registering';
    const { core } = this.nodeClients;
    let node: V1Node;
    try {
      node = await core.createNode({ body: nodeObjectOf(this.instance) });
    } catch (err) {
      // A kubelet restarted after registering finds its Node and carries on.
      if (!isConflict(err)) throw err;
      node = await core.readNode({ name: this.nodeName });
    }
    this.timings.nodeCreated = Date.now();
    await this.ensureStatus(node);
    this.phaseValue = 'registered';
  }

  /** The kubelet owns its status (NodeRestriction lets a node update only its own). */
  private async ensureStatus(created: V1Node): Promise<void> {
    const { core } = this.nodeClients;
    let node = created;
    for (let attempt = 1; !statusMatches(node, this.instance); attempt++) {
      try {
        await core.replaceNodeStatus({ name: this.nodeName, body: { ...node, status: { ...node.status, ...nodeStatusOf(this.instance) } } });
        return;
      } catch (err) {
        // kwok writes conditions concurrently: re-read and try again.
        if (!isConflict(err) || attempt >= 5) throw err;
        node = await core.readNode({ name: this.nodeName });
      }
    }
  }

  private async requestServingCertificate(): Promise<string> {
    const name = await this.submit(this.nodeClients, Signers.kubeletServing, SERVING_USAGES, {
      ...this.nodeSubject(),
      dnsNames: [this.instance.privateDnsName],
      ipAddresses: [this.instance.privateIp],
    });
    this.timings.servingCsrSubmitted = Date.now();
    this.phaseValue = 'serving-csr-submitted';
    return name;
  }

  /** Submits a CSR no honest kubelet would; returns its name. */
  async forgeCsr(kind: ForgedCsrKind, options: { foreignNodeName?: string } = {}): Promise<string> {
    const foreignSubject = { commonName: nodeUsername(options.foreignNodeName ?? FOREIGN_NODE_NAME), organizations: [NODES_GROUP] };
    const servingSubject = { ...this.nodeSubject(), dnsNames: [this.instance.privateDnsName], ipAddresses: [this.instance.privateIp] };
    switch (kind) {
      case 'wrong-requester': {
        if (!this.options.forger) throw new Error("forgeCsr('wrong-requester') needs the `forger` identity option");
        return this.submit(kubeClientsFromConfig(this.options.forger), Signers.kubeletClient, CLIENT_USAGES, this.nodeSubject());
      }
      case 'foreign-node-name':
        return this.submit(this.bootstrapClients, Signers.kubeletClient, CLIENT_USAGES, foreignSubject);
      case 'foreign-node-name-as-node':
        return this.submit(this.nodeClients, Signers.kubeletClient, CLIENT_USAGES, foreignSubject);
      case 'foreign-ip-san':
        return this.submit(this.nodeClients, Signers.kubeletServing, SERVING_USAGES, { ...servingSubject, ipAddresses: [this.instance.privateIp, FOREIGN_IP] });
      case 'extra-usages':
        return this.submit(this.nodeClients, Signers.kubeletServing, [...SERVING_USAGES, 'client auth'], servingSubject);
      case 'second-client-csr':
        return this.submit(this.bootstrapClients, Signers.kubeletClient, CLIENT_USAGES, this.nodeSubject());
      default:
        return assertNever(kind);
    }
  }

  private nodeSubject(): CsrSubject {
    return { commonName: nodeUsername(this.nodeName), organizations: [NODES_GROUP] };
  }

  private async submit(clients: KubeClients, signerName: string, usages: string[], subject: CsrSubject, key?: KubeletKey): Promise<string> {
    const requestKey = key ?? (await generateKubeletKey());
    return submitCsr(clients.certificates, { signerName, usages, requestPem: await createCsrPem(requestKey, subject) });
  }

  private waitOptions() {
    return { signal: this.abort.signal, pollMs: this.options.pollMs ?? 200 };
  }
}
