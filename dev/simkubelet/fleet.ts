/**
 * One simulated kubelet per running instance the cloud provider lists for the cluster:
 * what `autonode dev` and end-to-end tests run so that launched instances join the guest
 * cluster. Polls once a second; an instance that disappears has its kubelet stopped (its
 * Node stays, as a dead machine's would, until autonode removes it).
 */
import { type KubeConfig } from '@kubernetes/client-node';
import { type CloudInstance } from '../../activities/cloud/domain';
import { CsrRejectedError, sleep } from './csr-requests';
import { SimulatedKubelet, type KubeletDisk, type KubeletRun } from './kubelet';
import { type SimulatedInstance } from './node-object';
import { planBoot, type WithoutUserData } from './boot';
import { type ClusterAccess } from './identity';
import { nodeShapes, type ShapeOfBootstrap } from './resources';

export type FleetEvent =
  | { type: 'started'; instanceId: string; nodeName: string }
  | { type: 'registered'; instanceId: string; run: KubeletRun }
  | { type: 'failed'; instanceId: string; error: unknown }
  /** with `restartFailedKubelets`: the kubelet failed on something other than a refused CSR and is started again on the next poll */
  | { type: 'restarting'; instanceId: string; error: unknown }
  | { type: 'gone'; instanceId: string }
  | { type: 'list-failed'; error: unknown };

export interface SimulatedKubeletFleetOptions {
  /** live instances of the cluster, e.g. an EC2 CloudProvider's `list` */
  listInstances: () => Promise<CloudInstance[]>;
  /** the instance's userData (instanceUserData(ec2)): each machine boots from it (boot.ts) */
  userDataOf: (instanceId: string) => Promise<string | undefined>;
  /** the region of the bundled catalog the nodes' hardware comes from */
  region: string;
  /**
   * how an instance launched without userData joins (tests without enablement); absent,
   * such an instance gets no kubelet ('failed' event), like a machine with nothing to boot from
   */
  withoutUserData?: WithoutUserData;
  pollMs?: number;
  onEvent?: (event: FleetEvent) => void;
  /**
   * Start a kubelet again (on the next poll) when its run failed on anything but a refused
   * CSR — an API server that was down, a 429 — as systemd restarts a real one, with its disk. Off by
   * default: tests that watch a kubelet fail expect it to stay down.
   */
  restartFailedKubelets?: boolean;
}

export class SimulatedKubeletFleet {
  private readonly kubelets = new Map<string, SimulatedKubelet>();
  private readonly runs = new Map<string, Promise<KubeletRun | undefined>>();
  /** each machine's disk: a restarted kubelet finds its bootstrap key and client certificate */
  private readonly disks = new Map<string, KubeletDisk>();
  /** instances whose kubelet cannot start (no usable configuration): reported once, never retried */
  private readonly refused = new Set<string>();
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private readonly shapes: ShapeOfBootstrap;

  constructor(private readonly options: SimulatedKubeletFleetOptions) {
    this.shapes = nodeShapes(options.region);
  }

  start(): void {
    this.loop ??= this.pollLoop();
  }

  kubeletFor(instanceId: string): SimulatedKubelet | undefined {
    return this.kubelets.get(instanceId);
  }

  /** Resolves when the instance's kubelet has submitted its serving CSR. */
  async registered(instanceId: string): Promise<KubeletRun | undefined> {
    return this.runs.get(instanceId);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort(new Error('fleet stopped'));
    for (const kubelet of this.kubelets.values()) kubelet.stop();
    await this.loop;
    await Promise.allSettled(this.runs.values());
  }

  /** One reconciliation: start kubelets for new running instances, stop those gone. */
  async syncOnce(): Promise<void> {
    const instances = await this.options.listInstances();
    const live = new Set(instances.map((i) => i.instanceId));
    for (const instance of instances) {
      if (this.kubelets.has(instance.instanceId) || this.refused.has(instance.instanceId)) continue;
      const booting = await this.toSimulated(instance);
      if (booting) this.launch(booting.instance, booting.guest, booting.bootstrap);
    }
    for (const instanceId of this.refused) if (!live.has(instanceId)) this.refused.delete(instanceId);
    for (const instanceId of this.disks.keys()) if (!live.has(instanceId)) this.disks.delete(instanceId);
    for (const [instanceId, kubelet] of this.kubelets) {
      if (live.has(instanceId)) continue;
      kubelet.stop();
      this.kubelets.delete(instanceId);
      this.options.onEvent?.({ type: 'gone', instanceId });
    }
  }

  private async pollLoop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.syncOnce();
      } catch (error) {
        // The next poll retries; the listener decides whether this is worth a log line.
        this.options.onEvent?.({ type: 'list-failed', error });
      }
      await sleep(this.options.pollMs ?? 1000, this.abort.signal).catch(() => undefined);
    }
  }

  /** A machine boots its kubelet once it is running and has an address, not before; from its userData. */
  private async toSimulated(instance: CloudInstance): Promise<{ instance: SimulatedInstance; guest: ClusterAccess; bootstrap: KubeConfig } | undefined> {
    const privateIp = instance.privateIpAddresses[0];
    if (instance.state !== 'running' || !instance.privateDnsName || !privateIp) return undefined;
    const userData = await this.options.userDataOf(instance.instanceId);
    const plan = await planBoot(instance, userData, { shapes: this.shapes, ...(this.options.withoutUserData ? { withoutUserData: this.options.withoutUserData } : {}) });
    if (!plan.ok) {
      this.refused.add(instance.instanceId);
      this.options.onEvent?.({ type: 'failed', instanceId: instance.instanceId, error: new Error(`kubelet on ${instance.instanceId} cannot start: ${plan.reason}`) });
      return undefined;
    }
    return {
      instance: {
        instanceId: instance.instanceId,
        zone: instance.zone,
        privateDnsName: instance.privateDnsName,
        privateIp,
        instanceType: instance.instanceType,
        ...plan.shape,
      },
      guest: plan.guest,
      bootstrap: plan.bootstrap,
    };
  }

  private launch(instance: SimulatedInstance, guest: ClusterAccess, bootstrap: KubeConfig): void {
    let disk = this.disks.get(instance.instanceId);
    if (!disk) this.disks.set(instance.instanceId, (disk = {}));
    const kubelet = new SimulatedKubelet({ instance, guest, bootstrap, disk });
    this.kubelets.set(instance.instanceId, kubelet);
    this.options.onEvent?.({ type: 'started', instanceId: instance.instanceId, nodeName: kubelet.nodeName });
    const run = kubelet.run().then(
      (result) => {
        this.options.onEvent?.({ type: 'registered', instanceId: instance.instanceId, run: result });
        return result;
      },
      (error: unknown) => {
        if (this.stopped) return undefined;
        // A kubelet whose CSR was denied stays down, like a machine that cannot join.
        if (this.options.restartFailedKubelets && kubelet.phase !== 'stopped' && !(error instanceof CsrRejectedError)) {
          // the disk keeps its bootstrap key (the same CSR is asked for again and waited on)
          // and its client certificate; registering again finds its Node
          if (this.kubelets.get(instance.instanceId) === kubelet) this.kubelets.delete(instance.instanceId);
          this.options.onEvent?.({ type: 'restarting', instanceId: instance.instanceId, error });
          return undefined;
        }
        this.options.onEvent?.({ type: 'failed', instanceId: instance.instanceId, error });
        return undefined;
      },
    );
    this.runs.set(instance.instanceId, run);
  }
}
