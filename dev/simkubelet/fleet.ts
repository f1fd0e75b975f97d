/**
 * One simulated kubelet per running instance the cloud provider lists for the cluster:
 * what `autonode dev` and end-to-end tests run so that launched instances join the guest
 * cluster. Polls once a second; an instance that disappears has its kubelet stopped (its
 * Node stays, as a dead machine's would, until autonode removes it).
 */
import { type KubeConfig } from '@kubernetes/client-node';
import { type CloudInstance } from '../../activities/cloud/domain';
import { sleep } from './csr-requests';
import { type ClusterAccess } from './identity';
import { SimulatedKubelet, type KubeletRun } from './kubelet';
import { type SimulatedInstance } from './node-object';
import { type NodeShapeOf } from './resources';

export type FleetEvent =
  | { type: 'started'; instanceId: string; nodeName: string }
  | { type: 'registered'; instanceId: string; run: KubeletRun }
  | { type: 'failed'; instanceId: string; error: unknown }
  | { type: 'gone'; instanceId: string }
  | { type: 'list-failed'; error: unknown };

export interface SimulatedKubeletFleetOptions {
  /** live instances of the cluster, e.g. an EC2 CloudProvider's `list` */
  listInstances: () => Promise<CloudInstance[]>;
  guest: ClusterAccess;
  /** current bootstrapper credentials (tokens expire: see bootstrapIdentitySource) */
  bootstrap: () => Promise<KubeConfig>;
  /** what the instance's kubelet reports (launchedNodeShapes: from the settings it was launched with) */
  shapeOf: NodeShapeOf;
  pollMs?: number;
  onEvent?: (event: FleetEvent) => void;
}

export class SimulatedKubeletFleet {
  private readonly kubelets = new Map<string, SimulatedKubelet>();
  private readonly runs = new Map<string, Promise<KubeletRun | undefined>>();
  /** instances whose kubelet cannot start (no usable configuration): reported once, never retried */
  private readonly refused = new Set<string>();
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly options: SimulatedKubeletFleetOptions) {}

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
      const simulated = this.toSimulated(instance);
      if (simulated) await this.launch(simulated);
    }
    for (const instanceId of this.refused) if (!live.has(instanceId)) this.refused.delete(instanceId);
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

  /** A machine boots its kubelet once it is running and has an address, not before. */
  private toSimulated(instance: CloudInstance): SimulatedInstance | undefined {
    const privateIp = instance.privateIpAddresses[0];
    if (instance.state !== 'running' || !instance.privateDnsName || !privateIp) return undefined;
    const shape = this.options.shapeOf(instance);
    if (!shape.ok) {
      this.refused.add(instance.instanceId);
      this.options.onEvent?.({ type: 'failed', instanceId: instance.instanceId, error: new Error(`kubelet on ${instance.instanceId} cannot start: ${shape.reason}`) });
      return undefined;
    }
    return {
      instanceId: instance.instanceId,
      zone: instance.zone,
      privateDnsName: instance.privateDnsName,
      privateIp,
      instanceType: instance.instanceType,
      ...shape.shape,
    };
  }

  private async launch(instance: SimulatedInstance): Promise<void> {
    const kubelet = new SimulatedKubelet({ instance, guest: this.options.guest, bootstrap: await this.options.bootstrap() });
    this.kubelets.set(instance.instanceId, kubelet);
    this.options.onEvent?.({ type: 'started', instanceId: instance.instanceId, nodeName: kubelet.nodeName });
    const run = kubelet.run().then(
      (result) => {
        this.options.onEvent?.({ type: 'registered', instanceId: instance.instanceId, run: result });
        return result;
      },
      (error: unknown) => {
        // A kubelet whose CSR was denied stays down, like a machine that cannot join.
        if (!this.stopped) this.options.onEvent?.({ type: 'failed', instanceId: instance.instanceId, error });
        return undefined;
      },
    );
    this.runs.set(instance.instanceId, run);
  }
}
