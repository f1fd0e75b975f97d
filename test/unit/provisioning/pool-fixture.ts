import { type HeldOffering } from '../../../core/provisioning';
import { aNodePool, anEC2NodeClass, type Doc } from '../api/builders';
import { type FakeGuest } from '../metrics/fake-guest';

/** The EC2NodeClass `nc` (userData `boot`) and the NodePool `a` that launches from it, as the guest stores them. */
export function putPoolOnClass(guest: FakeGuest): void {
  guest.put('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/nc', { ...anEC2NodeClass({ userData: 'boot' }), metadata: { name: 'nc' } });
  const pool = aNodePool();
  (pool.spec as { template: { spec: Doc } }).template.spec.nodeClassRef = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'nc' };
  guest.put('/apis/karpenter.sh/v1/nodepools/a', { ...pool, metadata: { name: 'a' } });
}

/** `createClaims` input for NodeClaims of pool `a`, each one on-demand m5.large for 1 cpu. */
export function poolClaims(names: readonly string[], unavailable: HeldOffering[] = []) {
  return {
    cluster: { name: 'c1', region: 'us-east-1' },
    taskQueues: { control: 'control', cloud: 'cloud', packing: 'packing' },
    batchId: 'b1',
    templates: [{ pool: 'a', poolUid: 'uid-a', labels: { 'karpenter.sh/nodepool': 'a' }, annotations: {}, nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'nc' } }],
    optionLists: [['m5.large']],
    claims: names.map((name) => ({ name, pool: 'a', options: 0, requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }], requests: { cpu: '1' }, price: 0.096, pods: 1 })),
    unavailable,
  };
}
