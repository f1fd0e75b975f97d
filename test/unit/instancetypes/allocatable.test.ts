import type { AmiFamily, KubeletProfile } from '../../../core/instancetypes/kubelet';
import { anInstanceType } from './builders';

type Profile = { amiFamily: AmiFamily; kubeletProfile?: KubeletProfile };
const al2023: Profile = { amiFamily: 'AL2023' };
const openshiftStatic: Profile = { amiFamily: 'Custom', kubeletProfile: 'openshift-static' };
const openshiftAutosize: Profile = { amiFamily: 'Custom', kubeletProfile: 'openshift-autosize' };

// Hand derivations. Memory capacity = MiB − (64 on arm64) − ceil(MiB × 0.075).
//  t3.nano 512 → 473Mi · t3.micro 1024 → 947Mi · t3.medium 4096 → 3788Mi
//  m5.large/m5d.large 8192 → 7577Mi · m6g.large 8192−64=8128 → 7518Mi
//  i3.large 15616 → 14444Mi · g4dn.xlarge 16384 → 15155Mi · m5.metal 393216 → 363724Mi
// AL2023: pods = ENIs × (IPv4/ENI − 1) + 2; kube-reserved memory 11 × pods + 255 Mi,
//  cpu 60/70/80/…m by core bands (96 vCPU: 60+10+10+230 = 310m); eviction 100Mi;
//  ephemeral 20Gi − 1Gi kube-reserved − 10% (2Gi) = 17Gi.
// OpenShift: pods 250; ephemeral 120Gi − 1Gi − 12Gi = 107Gi; memory − systemReserved − 100Mi.
//  static: 500m cpu, 1Gi memory. autosize: cpu max(500m, round(60 + 12(n−1))), memory by
//  floor(capacity GiB): 0 → 0Gi, 3 → 1Gi, 7 → 2Gi, 14 → 2Gi, 355 → 14Gi.
const expected: ReadonlyArray<[string, Profile, Record<string, string>]> = [
  // small
  ['t3.nano', al2023, { cpu: '1930m', memory: '74Mi', 'ephemeral-storage': '17Gi', pods: '4' }], // 473 − (11×4+255=299) − 100
  ['t3.nano', openshiftStatic, { cpu: '1500m', memory: '0', 'ephemeral-storage': '107Gi', pods: '250' }], // 473 − 1024 − 100 < 0
  ['t3.nano', openshiftAutosize, { cpu: '1500m', memory: '373Mi', 'ephemeral-storage': '107Gi', pods: '250' }], // 473 − 0 − 100
  ['t3.micro', al2023, { cpu: '1930m', memory: '548Mi', 'ephemeral-storage': '17Gi', pods: '4' }], // 947 − 299 − 100
  ['t3.micro', openshiftStatic, { cpu: '1500m', memory: '0', 'ephemeral-storage': '107Gi', pods: '250' }],
  ['t3.micro', openshiftAutosize, { cpu: '1500m', memory: '847Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
  // burstable
  ['t3.medium', al2023, { cpu: '1930m', memory: '3246Mi', 'ephemeral-storage': '17Gi', pods: '17' }], // 3×5+2=17; 3788 − 442 − 100
  ['t3.medium', openshiftStatic, { cpu: '1500m', memory: '2664Mi', 'ephemeral-storage': '107Gi', pods: '250' }], // 3788 − 1124
  ['t3.medium', openshiftAutosize, { cpu: '1500m', memory: '2664Mi', 'ephemeral-storage': '107Gi', pods: '250' }], // 3 GiB → 0.75 → 1Gi
  // general purpose: the pinned Karpenter example
  ['m5.large', al2023, { cpu: '1930m', memory: '6903Mi', 'ephemeral-storage': '17Gi', pods: '29' }],
  ['m5.large', openshiftStatic, { cpu: '1500m', memory: '6453Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
  ['m5.large', openshiftAutosize, { cpu: '1500m', memory: '5429Mi', 'ephemeral-storage': '107Gi', pods: '250' }], // 7577 − 2048 − 100
  // metal
  ['m5.metal', al2023, { cpu: '95690m', memory: '355262Mi', 'ephemeral-storage': '17Gi', pods: '737' }], // 15×49+2; 363724 − 8362 − 100
  ['m5.metal', openshiftStatic, { cpu: '95500m', memory: '362600Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
  ['m5.metal', openshiftAutosize, { cpu: '94800m', memory: '349288Mi', 'ephemeral-storage': '107Gi', pods: '250' }], // 1200m; 14Gi
  // GPU
  ['g4dn.xlarge', al2023, { cpu: '3920m', memory: '14481Mi', 'ephemeral-storage': '17Gi', pods: '29', 'nvidia.com/gpu': '1' }],
  ['g4dn.xlarge', openshiftStatic, { cpu: '3500m', memory: '14031Mi', 'ephemeral-storage': '107Gi', pods: '250', 'nvidia.com/gpu': '1' }],
  ['g4dn.xlarge', openshiftAutosize, { cpu: '3500m', memory: '13007Mi', 'ephemeral-storage': '107Gi', pods: '250', 'nvidia.com/gpu': '1' }],
  // arm64
  ['m6g.large', al2023, { cpu: '1930m', memory: '6844Mi', 'ephemeral-storage': '17Gi', pods: '29' }],
  ['m6g.large', openshiftStatic, { cpu: '1500m', memory: '6394Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
  ['m6g.large', openshiftAutosize, { cpu: '1500m', memory: '5370Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
  // instance store (root volume still holds ephemeral storage without RAID0)
  ['m5d.large', al2023, { cpu: '1930m', memory: '6903Mi', 'ephemeral-storage': '17Gi', pods: '29' }],
  ['m5d.large', openshiftStatic, { cpu: '1500m', memory: '6453Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
  ['m5d.large', openshiftAutosize, { cpu: '1500m', memory: '5429Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
  ['i3.large', al2023, { cpu: '1930m', memory: '13770Mi', 'ephemeral-storage': '17Gi', pods: '29' }],
  ['i3.large', openshiftStatic, { cpu: '1500m', memory: '13320Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
  ['i3.large', openshiftAutosize, { cpu: '1500m', memory: '12296Mi', 'ephemeral-storage': '107Gi', pods: '250' }],
];

describe('allocatable', () => {
  it.each(expected)('%s under %j', (name, profile, allocatable) => {
    expect(anInstanceType(name, profile).allocatable).toEqual(allocatable);
  });

  it.each<[string, Profile, Record<string, string>]>([
    ['m5.large', al2023, { cpu: '2', memory: '7577Mi', 'ephemeral-storage': '20Gi', pods: '29' }],
    ['m6g.large', openshiftStatic, { cpu: '2', memory: '7518Mi', 'ephemeral-storage': '120Gi', pods: '250' }],
    ['m5.metal', al2023, { cpu: '96', memory: '363724Mi', 'ephemeral-storage': '20Gi', pods: '737' }],
  ])('capacity of %s under %j', (name, profile, capacity) => {
    expect(anInstanceType(name, profile).capacity).toEqual(capacity);
  });

  it('puts ephemeral storage on the instance store with RAID0', () => {
    // 75 GB = 75000000000 bytes; − 1Gi (1073741824) − 10% (7500000000) = 66426258176.
    const m5d = anInstanceType('m5d.large', { amiFamily: 'AL2023', instanceStorePolicy: 'RAID0' });
    expect(m5d.capacity['ephemeral-storage']).toBe('75G');
    expect(m5d.allocatable['ephemeral-storage']).toBe('66426258176');
  });

  it('uses the EC2NodeClass root volume size', () => {
    // 100Gi − 1Gi − 10Gi = 89Gi
    expect(anInstanceType('m5.large', { amiFamily: 'AL2023', rootVolumeSize: '100Gi' }).allocatable['ephemeral-storage']).toBe('89Gi');
  });
});
