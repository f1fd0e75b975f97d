import { type CloudInstance, type CloudProvider, type NodeClassInput, type LaunchRequest, type LaunchResult, type NodeClassResolution, type TerminateOutcome } from '../../../activities/cloud';
import { type InstanceType } from '../../../core/instancetypes';

/**
 * The cloud-provider port in memory: one instance per NodeClaim (a second launch for the
 * same claim finds it, as the EC2 provider does by tag), the cheapest offering of the first
 * option launched, calls recorded, and one-shot errors injected per method.
 */
export class FakeCloudProvider implements CloudProvider {
  readonly calls: string[] = [];
  readonly instances = new Map<string, CloudInstance>();
  private readonly failures = new Map<keyof CloudProvider, unknown[]>();
  private launched = 0;

  constructor(
    private readonly types: InstanceType[] = [],
    /** what every node class resolves to (assign to move it: a subnet or group taken away) */
    public resolution: NodeClassResolution = {
      ready: true,
      subnets: [{ id: 'subnet-a', zone: 'us-east-1a', availableIpCount: 100 }],
      securityGroups: [{ id: 'sg-1', name: 'nodes' }],
      amis: [{ id: 'ami-amd64', name: 'node', architecture: 'x86_64', creationDate: '2026-01-01T00:00:00Z', deprecated: false }],
      conditions: [],
    },
  ) {}

  /** the next call of `method` throws `error` (queued: several calls, several errors) */
  failNext(method: keyof CloudProvider, error: unknown): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), error]);
  }

  private enter(method: keyof CloudProvider): void {
    this.calls.push(method);
    const queued = this.failures.get(method);
    const error = queued?.shift();
    if (error !== undefined) throw error;
  }

  /** `resolution`, with the class's own userData passed through as the provider renders amiFamily Custom */
  async resolveNodeClass(nodeClass: NodeClassInput): Promise<NodeClassResolution> {
    this.enter('resolveNodeClass');
    return nodeClass.spec.userData !== undefined ? { ...this.resolution, userData: nodeClass.spec.userData } : this.resolution;
  }
  async launch(request: LaunchRequest): Promise<LaunchResult> {
    this.enter('launch');
    const existing = this.instances.get(request.nodeClaim.name);
    if (existing) return { instance: existing, reused: true, exhaustedOfferings: [] };
    const option = request.instanceTypes[0];
    const offering = option?.offerings.filter((o) => request.capacityTypes.includes(o.capacityType)).sort((a, b) => a.price - b.price)[0];
    if (!option || !offering) throw new Error(`fake cloud: nothing to launch for ${request.nodeClaim.name}`);
    const n = ++this.launched;
    const instance: CloudInstance = {
      providerId: `aws:///${offering.zone}/i-${String(n).padStart(17, '0')}`,
      instanceId: `i-${String(n).padStart(17, '0')}`,
      instanceType: option.instanceType,
      zone: offering.zone,
      capacityType: offering.capacityType,
      imageId: request.images[option.architecture] ?? '',
      state: 'running',
      ...(() => {
        const subnet = request.nodeClass.subnets.find((x) => x.zone === offering.zone);
        return subnet ? { subnetId: subnet.id } : {};
      })(),
      securityGroupIds: [...request.nodeClass.securityGroupIds],
      privateDnsName: `ip-10-0-0-${n}.ec2.internal`,
      privateIpAddresses: [`10.0.0.${n}`],
      launchTime: '2026-11-24T12:00:00Z',
      tags: { 'karpenter.sh/nodeclaim': request.nodeClaim.name, 'karpenter.sh/nodepool': request.nodePool },
    };
    this.instances.set(request.nodeClaim.name, instance);
    return { instance, reused: false, exhaustedOfferings: [] };
  }
  async get(providerId: string): Promise<CloudInstance> {
    this.enter('get');
    const found = [...this.instances.values()].find((i) => i.providerId === providerId);
    if (!found) throw new Error(`fake cloud: no ${providerId}`);
    return found;
  }
  async findByNodeClaim(name: string): Promise<CloudInstance | undefined> {
    this.enter('findByNodeClaim');
    return this.instances.get(name);
  }
  async list(): Promise<CloudInstance[]> {
    this.enter('list');
    return [...this.instances.values()];
  }
  async terminate(providerId: string): Promise<TerminateOutcome> {
    this.enter('terminate');
    for (const [claim, instance] of this.instances) {
      if (instance.providerId !== providerId) continue;
      this.instances.delete(claim);
      return { outcome: 'terminating', providerId, previousState: instance.state };
    }
    return { outcome: 'already-gone', providerId, reason: 'absent' };
  }
  async ensureLaunchTemplate(): Promise<{ id: string; name: string }> {
    this.enter('ensureLaunchTemplate');
    return { id: 'lt-1', name: 'autonode-template' };
  }
  async deleteStaleLaunchTemplates(): Promise<string[]> {
    this.enter('deleteStaleLaunchTemplates');
    return [];
  }
  async collectLeakedInstances(): Promise<{ terminated: never[]; kept: never[]; skipped: never[] }> {
    this.enter('collectLeakedInstances');
    return { terminated: [], kept: [], skipped: [] };
  }
  async instanceTypes(): Promise<InstanceType[]> {
    this.enter('instanceTypes');
    return this.types;
  }
}

/** The fake cloud, keeping each launch request it was sent (what the fleet was offered, its signal). */
export class RecordingCloud extends FakeCloudProvider {
  readonly requests: LaunchRequest[] = [];
  override async launch(request: LaunchRequest): Promise<LaunchResult> {
    this.requests.push(request);
    return super.launch(request);
  }
}
