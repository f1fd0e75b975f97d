import { type CoreV1Event } from '@kubernetes/client-node';
import { randomInt } from 'node:crypto';
import { kubeClientsFromConfig, kubeClientsFromKubeconfigFile, type KubeClients } from '../../activities/kube/clients';
import { createCsrActivities, csrState, type CsrActivities } from '../../activities/kube/csr';
import { isInvalidCsrError, parseCsr } from '../../activities/kube/csr-parse';

/** The CN of a kubelet client CSR (undefined for any other CSR). */
function clientCommonNameOf(csr: unknown): string | undefined {
  try {
    const parsed = parseCsr(csr);
    return parsed.signerName === 'kubernetes.io/kube-apiserver-client-kubelet' ? parsed.subject.commonName : undefined;
  } catch (err) {
    // other tests leave malformed requests behind: those name no node here
    if (isInvalidCsrError(err)) return undefined;
    throw err;
  }
}
import { createEventRecorder, EVENT_SOURCE_COMPONENT } from '../../activities/kube/events';
import { isForbidden } from '../../activities/kube/errors';
import { defaultCsrPolicy, type CsrCheck, type ExpectedNode } from '../../core/csr/csr-policy';
import {
  CLIENT_USAGES,
  FOREIGN_IP,
  SimulatedKubelet,
  bootstrapCsrName,
  createCsrPem,
  generateKubeletKey,
  submitCsr,
  type KubeletDisk,
  SimulatedKubeletFleet,
  instanceUserData,
  type FleetEvent,
  UNREGISTERED_TAINT,
  clusterAccessOf,
  ensureBootstrapIdentity,
  ensureServiceAccountIdentity,
  nodeObjectOf,
  type ForgedCsrKind,
  type ServiceAccountIdentity,
  type SimulatedInstance,
} from '../../dev/simkubelet';
import { nodeIgnition } from '../../core/enablement/ignition';
import { loadStackInfo } from '../support/stack';
import { aLaunchRequest, startCloudHarness } from '../support/cloud';
import { eventually } from '../support/eventually';



/** A launched instance with a private address no other test uses. */
function anInstance(overrides: Partial<SimulatedInstance> = {}): SimulatedInstance {
  const [b, c] = [randomInt(1, 250), randomInt(1, 250)];
  return {
    instanceId: `i-${randomInt(0, 2 ** 40).toString(16).padStart(17, '0')}`,
    zone: 'us-east-1a',
    privateDnsName: `ip-10-${b}-${c}-7.ec2.internal`,
    privateIp: `10.${b}.${c}.7`,
    instanceType: 'm5.large',
    capacity: { cpu: '2', memory: '7577Mi', pods: '29', 'ephemeral-storage': '20Gi' },
    allocatable: { cpu: '1930m', memory: '6903Mi', pods: '29', 'ephemeral-storage': '17Gi' },
    ...overrides,
  };
}

/**
 * The smallest approver that exercises reviewNodeCsrs the way autonode's workflow does:
 * each tick, every node it expects has its CSRs reviewed together. CSRs about nodes it does
 * not know are left alone.
 */
class TestApprover {
  private readonly nodes = new Map<string, { instance: SimulatedInstance; launchedAt: number }>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly admin: KubeClients,
    private readonly csrs: CsrActivities,
  ) {}

  expect(instance: SimulatedInstance, launchedAt: number): void {
    this.nodes.set(instance.privateDnsName, { instance, launchedAt });
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), 150);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      for (const known of this.nodes.values()) {
        await this.csrs.reviewNodeCsrs({ node: await this.expectedNode(known.instance, known.launchedAt), policy: defaultCsrPolicy });
      }
    } finally {
      this.busy = false;
    }
  }

  private async expectedNode(instance: SimulatedInstance, launchedAt: number): Promise<ExpectedNode> {
    const nodes = await this.admin.core.listNode({ fieldSelector: `metadata.name=${instance.privateDnsName}` });
    return {
      nodeName: instance.privateDnsName,
      instanceId: instance.instanceId,
      nodeClaimName: `claim-${instance.instanceId}`,
      dnsNames: [instance.privateDnsName],
      ipAddresses: [instance.privateIp],
      launchedAt,
      registered: nodes.items.length > 0,
    };
  }
}

async function karpenterEventsFor(admin: KubeClients, objectName: string): Promise<CoreV1Event[]> {
  const events = await admin.core.listEventForAllNamespaces({ fieldSelector: `source=${EVENT_SOURCE_COMPONENT}` });
  return events.items.filter((e) => e.involvedObject.name === objectName);
}

describe('simulated kubelet against the real guest control plane', () => {
  let admin: KubeClients;
  let bootstrap: ServiceAccountIdentity;
  let forger: ServiceAccountIdentity;
  let csrs: CsrActivities;
  let approver: TestApprover;
  const createdNodes: string[] = [];

  beforeAll(async () => {
    admin = kubeClientsFromKubeconfigFile(loadStackInfo().guest.kubeconfigPath);
    bootstrap = await ensureBootstrapIdentity(admin);
    forger = await ensureServiceAccountIdentity(admin, { namespace: 'default', name: 'csr-forger', clusterRole: 'system:node-bootstrapper' });
    csrs = createCsrActivities({ guest: admin, recordEvent: createEventRecorder(admin.core) });
    approver = new TestApprover(admin, csrs);
    approver.start();
  });

  afterAll(async () => {
    approver.stop();
    await Promise.allSettled(createdNodes.map((name) => admin.core.deleteNode({ name })));
  });

  function aKubelet(instance: SimulatedInstance, options: { disk?: KubeletDisk; approve?: boolean } = {}): SimulatedKubelet {
    // EC2 launch times are whole seconds; the CSR comes after, as on a real machine.
    if (options.approve ?? true) approver.expect(instance, Math.floor(Date.now() / 1000) * 1000);
    createdNodes.push(instance.privateDnsName);
    return new SimulatedKubelet({ instance, guest: clusterAccessOf(admin.config), bootstrap: bootstrap.kubeConfig, forger: forger.kubeConfig, ...(options.disk ? { disk: options.disk } : {}) });
  }

  /** Every kubelet client CSR in the cluster whose request names this node (by its CN). */
  async function clientCsrsOf(nodeName: string): Promise<string[]> {
    const all = await admin.certificates.listCertificateSigningRequest();
    return all.items.filter((csr) => clientCommonNameOf(csr) === `system:node:${nodeName}`).map((csr) => csr.metadata!.name!);
  }

  describe('a client CSR is asked for once per machine, as the kubelet does', () => {
    it('a kubelet restarted while its client CSR is pending asks again under the same name and joins with that one request', async () => {
      const instance = anInstance();
      const disk: KubeletDisk = {};
      // not yet expected by the approver: the first kubelet's request stays pending
      const first = aKubelet(instance, { disk, approve: false });
      const firstRun = first.run().then(() => 'joined', (err: unknown) => err);
      await eventually('the first kubelet to submit its client CSR', async () => (first.phase === 'awaiting-client-certificate' ? true : undefined));
      first.stop();
      expect(await firstRun).toBeInstanceOf(Error);
      const [pending] = await clientCsrsOf(instance.privateDnsName);
      expect(pending).toMatch(/^node-csr-[A-Za-z0-9_-]{43}$/);

      const second = aKubelet(instance, { disk });
      const run = await second.run();
      expect(run.clientCsrName).toBe(pending);
      expect(await clientCsrsOf(instance.privateDnsName)).toEqual([pending]);
      expect(csrState(await admin.certificates.readCertificateSigningRequest({ name: pending! }))).toMatchObject({ phase: 'approved', reason: 'AutoNodeApproved' });

      // restarted once more after joining, it uses the certificate on its disk and asks for nothing
      const third = aKubelet(instance, { disk });
      expect((await third.run()).clientCsrName).toBe(pending);
      expect(await clientCsrsOf(instance.privateDnsName)).toEqual([pending]);
    });

    it('a create the API server stored but whose answer was lost is retried and taken as ours; another key under that name is refused', async () => {
      const instance = anInstance();
      const certificates = kubeClientsFromConfig(bootstrap.kubeConfig).certificates;
      let creates = 0;
      const lossy: typeof certificates = Object.create(certificates);
      lossy.createCertificateSigningRequest = async (param) => {
        creates += 1;
        const created = await certificates.createCertificateSigningRequest(param);
        // the server stored it; the answer never arrives (no HTTP status: the kubelet retries)
        if (creates === 1) throw new Error('socket hang up');
        return created;
      };
      const subject = { commonName: `system:node:${instance.privateDnsName}`, organizations: ['system:nodes'] };
      const key = await generateKubeletKey();
      const name = await bootstrapCsrName(key, subject, CLIENT_USAGES);
      const submission = { name, signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: CLIENT_USAGES, retryMs: 50 };

      expect(await submitCsr(lossy, { ...submission, requestPem: await createCsrPem(key, subject) })).toBe(name);
      expect(creates).toBe(2);
      expect(await clientCsrsOf(instance.privateDnsName)).toEqual([name]);

      // someone else's key under this kubelet's name: it must not wait on a request it cannot use
      const refusal = await submitCsr(certificates, { ...submission, requestPem: await createCsrPem(await generateKubeletKey(), subject) }).then(() => undefined, (err: unknown) => err);
      expect(refusal).toEqual(expect.objectContaining({ message: expect.stringContaining(`CSR ${name} already exists and is not this kubelet's request`) }));
      await admin.certificates.deleteCertificateSigningRequest({ name });
    });
  });

  it('bootstraps with real identities: client CSR approved and signed, Node registered as itself, serving CSR approved, kwok makes it Ready', async () => {
    const instance = anInstance();
    const kubelet = aKubelet(instance);
    const run = await kubelet.run();

    const clientCsr = await admin.certificates.readCertificateSigningRequest({ name: run.clientCsrName });
    expect(clientCsr.spec.username).toBe(bootstrap.username);
    expect(clientCsr.spec.signerName).toBe('kubernetes.io/kube-apiserver-client-kubelet');
    expect(csrState(clientCsr)).toEqual({ phase: 'approved', issued: true, reason: 'AutoNodeApproved', message: expect.stringContaining(`instance ${instance.instanceId}`) });

    const node = await admin.core.readNode({ name: instance.privateDnsName });
    expect(node.spec?.providerID).toBe(`aws:///us-east-1a/${instance.instanceId}`);
    expect(node.spec?.taints).toContainEqual(expect.objectContaining(UNREGISTERED_TAINT));
    expect(node.metadata?.labels).toMatchObject({
      'kubernetes.io/hostname': instance.privateDnsName,
      'node.kubernetes.io/instance-type': 'm5.large',
      'topology.kubernetes.io/zone': 'us-east-1a',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    });
    expect(node.status?.capacity).toMatchObject({ cpu: '2', pods: '29' });
    expect(node.status?.allocatable).toMatchObject({ cpu: '1930m', pods: '29' });
    expect(node.status?.addresses).toContainEqual({ type: 'InternalIP', address: instance.privateIp });

    // The certificate really is the node's identity: NodeRestriction lets it manage its own
    // Node and nothing else.
    const other = anInstance();
    const refusal = await kubelet.nodeClients.core.createNode({ body: nodeObjectOf(other) }).then(() => undefined, (err: unknown) => err);
    expect(isForbidden(refusal)).toBe(true);

    const servingCsr = await admin.certificates.readCertificateSigningRequest({ name: run.servingCsrName });
    expect(servingCsr.spec.username).toBe(`system:node:${instance.privateDnsName}`);
    const servingPem = await kubelet.waitForServingCertificate(run.servingCsrName);
    expect(servingPem).toContain('BEGIN CERTIFICATE');
    expect(csrState(await admin.certificates.readCertificateSigningRequest({ name: run.servingCsrName }))).toMatchObject({ phase: 'approved', reason: 'AutoNodeApproved' });

    await eventually('kwok to mark the node Ready', async () => {
      const n = await admin.core.readNode({ name: instance.privateDnsName });
      return n.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    });
    const readyAt = Date.now();
    const t = run.timings;
    process.stdout.write(
      `[simkubelet] client CSR → certificate ${t.clientCertificateIssued! - t.clientCsrSubmitted!} ms; → Node created ${t.nodeCreated! - t.clientCsrSubmitted!} ms; → serving CSR ${t.servingCsrSubmitted! - t.clientCsrSubmitted!} ms; → Ready ${readyAt - t.clientCsrSubmitted!} ms\n`,
    );

    const approvals = await karpenterEventsFor(admin, run.clientCsrName);
    expect(approvals).toEqual([expect.objectContaining({ reason: 'CSRApproved', type: 'Normal', source: { component: 'karpenter' }, reportingComponent: 'karpenter' })]);
  });

  describe('forged CSRs are denied, naming the check, with an Event', () => {
    let kubelet: SimulatedKubelet;
    let instance: SimulatedInstance;
    beforeAll(async () => {
      instance = anInstance();
      kubelet = aKubelet(instance);
      await kubelet.run();
    });

    it.each<[ForgedCsrKind, CsrCheck, string]>([
      ['wrong-requester', 'requester', 'requester system:serviceaccount:default:csr-forger'],
      ['foreign-ip-san', 'ipSan', `IP SAN ${FOREIGN_IP} is not an address of instance`],
      ['extra-usages', 'usages', 'not allowed client auth'],
      ['second-client-csr', 'notYetRegistered', 'is already registered'],
    ])('%s → denied by %s', async (kind, check, says) => {
      const name = await kubelet.forgeCsr(kind);
      const denied = await eventually(`CSR ${name} to be decided`, async () => {
        const state = csrState(await admin.certificates.readCertificateSigningRequest({ name }));
        return state.phase === 'pending' ? undefined : state;
      });
      expect(denied).toEqual({ phase: 'denied', reason: 'AutoNodeDenied', message: expect.stringContaining(`${check}: `) });
      expect(denied.phase === 'denied' && denied.message).toContain(says);
      if (kind === 'foreign-ip-san') expect(denied.phase === 'denied' && denied.message).toContain(`${instance.instanceId} (${instance.privateIp})`);

      const events = await eventually('the CSRDenied Event', async () => {
        const found = await karpenterEventsFor(admin, name);
        return found.length > 0 ? found : undefined;
      });
      expect(events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'CSRDenied', message: expect.stringContaining(says), source: { component: 'karpenter' } })]);
      expect(events[0]?.involvedObject).toMatchObject({ kind: 'CertificateSigningRequest', name });
    });
  });

  it('reviewing a decided CSR again changes nothing and records nothing', async () => {
    const instance = anInstance();
    const kubelet = aKubelet(instance);
    const run = await kubelet.run();
    const node: ExpectedNode = {
      nodeName: instance.privateDnsName, instanceId: instance.instanceId, dnsNames: [instance.privateDnsName], ipAddresses: [instance.privateIp], launchedAt: 0, registered: true,
    };
    await eventually('the serving CSR to be decided', async () => (csrState(await admin.certificates.readCertificateSigningRequest({ name: run.servingCsrName })).phase === 'pending' ? undefined : true));
    const again = await csrs.reviewNodeCsrs({ node, policy: defaultCsrPolicy });
    expect(again).toEqual({ approved: [], denied: [], failed: [] });
    expect(await karpenterEventsFor(admin, run.clientCsrName)).toHaveLength(1);
  });

  describe('a foreign node name', () => {
    let kubelet: SimulatedKubelet;
    let registeredNode: SimulatedInstance;
    beforeAll(async () => {
      registeredNode = anInstance();
      kubelet = aKubelet(registeredNode);
      await kubelet.run();
    });

    it('from the bootstrapper, for a node autonode does not know: left pending, no Event', async () => {
      const name = await kubelet.forgeCsr('foreign-node-name');
      await new Promise((r) => setTimeout(r, 1500));
      expect(csrState(await admin.certificates.readCertificateSigningRequest({ name })).phase).toBe('pending');
      expect(await karpenterEventsFor(admin, name)).toEqual([]);
      await admin.certificates.deleteCertificateSigningRequest({ name });
    });

    it('from the bootstrapper, for another of our nodes already registered: denied', async () => {
      const stranger = aKubelet(anInstance());
      const name = await stranger.forgeCsr('foreign-node-name', { foreignNodeName: registeredNode.privateDnsName });
      const state = await eventually(`CSR ${name} to be decided`, async () => {
        const s = csrState(await admin.certificates.readCertificateSigningRequest({ name }));
        return s.phase === 'pending' ? undefined : s;
      });
      expect(state).toEqual({ phase: 'denied', reason: 'AutoNodeDenied', message: expect.stringContaining(`notYetRegistered: node ${registeredNode.privateDnsName} is already registered`) });
    });

    it('from a node, in another node\'s name: the API server refuses it (NodeRestriction)', async () => {
      const refusal = await kubelet.forgeCsr('foreign-node-name-as-node').then(() => undefined, (err: unknown) => err);
      expect(isForbidden(refusal)).toBe(true);
    });
  });

  it('a fleet starts a kubelet for each running instance moto reports, booting from its userData, and stops it when the instance goes', async () => {
    const h = await startCloudHarness();
    const events: FleetEvent[] = [];
    // no withoutUserData: the machine knows its cluster only from its userData
    const fleet = new SimulatedKubeletFleet({
      listInstances: () => h.provider.list(),
      userDataOf: instanceUserData(h.direct),
      region: h.cluster.region,
      onEvent: (event) => events.push(event),
    });
    try {
      const request = await aLaunchRequest(h);
      const access = clusterAccessOf(admin.config);
      const token = bootstrap.kubeConfig.getCurrentUser()?.token ?? '';
      expect(token).not.toBe('');
      // an Ignition userData joining this cluster as the node bootstrapper; the node class's
      // kubelet settings are merged into it at launch
      const userData = nodeIgnition({ server: access.server, caPem: access.caPem, token });
      const { instance } = await h.provider.launch({ ...request, nodeClass: { ...request.nodeClass, userData, kubelet: { maxPods: 42, systemReserved: { cpu: '300m' } } } });
      const nodeName = instance.privateDnsName!;
      approver.expect({ ...anInstance(), instanceId: instance.instanceId, privateDnsName: nodeName, privateIp: instance.privateIpAddresses[0]! }, Date.parse(instance.launchTime));
      createdNodes.push(nodeName);
      fleet.start();

      const node = await eventually('the fleet kubelet to register a Ready node', async () => {
        const n = await admin.core.readNode({ name: nodeName });
        return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
      });
      expect(node.spec?.providerID).toBe(instance.providerId);
      expect(node.metadata?.labels?.['node.kubernetes.io/instance-type']).toBe(instance.instanceType);
      // m5.large from the catalog (2 vCPUs) under the class's amiFamily Custom (an OpenShift
      // kubelet) with maxPods 42 and systemReserved cpu 300m from its userData's drop-in
      expect(instance.instanceType).toBe('m5.large');
      expect(node.status?.capacity).toMatchObject({ cpu: '2', pods: '42' });
      expect(node.status?.allocatable).toMatchObject({ cpu: '1700m', pods: '42' });

      await h.provider.terminate(instance.providerId);
      await eventually('the fleet to notice the instance is gone', async () => (events.some((e) => e.type === 'gone' && e.instanceId === instance.instanceId) ? true : undefined));
      expect(events.filter((e) => e.type === 'failed' || e.type === 'list-failed')).toEqual([]);
    } finally {
      await fleet.stop();
      await h.close();
    }
  });

  it('the event recorder counts a repeat instead of adding a twin', async () => {
    const at = new Date();
    const record = createEventRecorder(admin.core, { now: () => at });
    const event = { involvedObject: { apiVersion: 'v1', kind: 'Node', name: `ip-repeat-${randomInt(1e9)}.ec2.internal` }, type: 'Normal' as const, reason: 'Testing', message: 'twice' };
    await record(event);
    await record(event);
    const events = await karpenterEventsFor(admin, event.involvedObject.name);
    expect(events).toEqual([expect.objectContaining({ count: 2, reason: 'Testing', message: 'twice' })]);
  });
});
