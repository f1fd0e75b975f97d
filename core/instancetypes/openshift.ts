// Capacity and allocatable of a HyperShift node (amiFamily: Custom, RHCOS), modelling
// OpenShift's kubelet rather than Karpenter's family guesses:
//   allocatable = capacity − systemReserved − kubeReserved − evictionHard
// Sources:
//  - maxPods 250: machine-config-operator templates/worker/01-worker-kubelet/_base/files/
//    kubelet.yaml (commit 7c89059).
//  - evictionHard: that file sets none, so the kubelet defaults apply: memory.available
//    100Mi, nodefs.available 10% (KubeletConfiguration v1beta1 defaults).
//  - kubeReserved: not set by OpenShift, so only what the EC2NodeClass kubelet asks for.
//  - systemReserved, two profiles from MCO templates/common/_base/files/
//    kubelet-auto-sizing.yaml (commit 83ec74d, /usr/local/sbin/dynamic-system-reserved-calc.sh)
//    and kubelet-auto-node-sizing-enabled.yaml:
//      openshift-static:   cpu 500m, memory 1Gi, ephemeral-storage 1Gi (the script's
//                          static_node_sizing defaults);
//      openshift-autosize: the script's dynamic_node_sizing, version 2 (see below).
// Memory capacity uses the same VM-overhead estimate as Karpenter (capacity.ts): it is
// the hypervisor's share, whatever OS runs on the instance.
import { fromMilliUnits, fromUnits, GIBIBYTE, NANOS_PER_UNIT, quantity } from '../scheduling/quantity';
import { ResourceName, type ResourceList } from '../scheduling/resources';
import { baseCapacity } from './capacity';
import type { InstanceTypeInfo } from './ec2-schemas';
import type { KubeletProfile, KubeletSettings } from './kubelet';
import { allocatableOf, type NodeResourcesOptions, type NodeResourcesResult } from './overhead';
import { evictionSignal, evictionThreshold, parseReservation } from './reservations';

export const openshiftMaxPods = 250;

/**
 * dynamic_cpu_sizing, version 2: 0.06 cores for the first CPU plus 0.012 per further
 * CPU, printed with two decimals (awk "%.2f"), then at least 0.5 (the script's "minimum
 * threshold of 0.5 CPU", cf. OCPBUGS-7747). 2 vCPUs: 0.072 → 0.07 → 0.5; 96 vCPUs: 1.2. In millicores:
 * 60 + 12(n−1) is even, so rounding to tens never meets a tie.
 */
export function autosizeCpuMillis(vcpus: number): number {
  const raw = vcpus > 1 ? 60 + 12 * (vcpus - 1) : 60;
  return Math.max(500, Math.round(raw / 10) * 10);
}

/**
 * dynamic_memory_sizing in whole GiB, from `free -g` (total memory truncated to GiB):
 * 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2%
 * above 128, then rounded half up ("%d" of x + 0.5). Computed in hundredths of a GiB so
 * it is exact; awk's intermediate values are two-decimal numbers, so no rounding differs.
 * 7 GiB (m5.large): 1 + 3 × 0.2 = 1.6 → 2Gi.
 */
export function autosizeMemoryGiB(totalGiB: number): number {
  let hundredths: number;
  if (totalGiB <= 4) hundredths = 25 * totalGiB;
  else if (totalGiB <= 8) hundredths = 100 + 20 * (totalGiB - 4);
  else if (totalGiB <= 16) hundredths = 180 + 10 * (totalGiB - 8);
  else if (totalGiB <= 128) hundredths = 260 + 6 * (totalGiB - 16);
  else hundredths = 932 + 2 * (totalGiB - 128);
  return Math.floor((hundredths + 50) / 100);
}

export function openshiftSystemReserved(profile: KubeletProfile, info: InstanceTypeInfo, memoryCapacity: bigint): ResourceList {
  switch (profile) {
    case 'openshift-static':
      return { [ResourceName.cpu]: quantity('500m'), [ResourceName.memory]: quantity('1Gi'), [ResourceName.ephemeralStorage]: quantity('1Gi') };
    case 'openshift-autosize': {
      // `free -g` reports what the kernel sees: capacity after the VM's share.
      const totalGiB = Number(memoryCapacity / NANOS_PER_UNIT / GIBIBYTE);
      return {
        [ResourceName.cpu]: fromMilliUnits(autosizeCpuMillis(info.VCpuInfo.DefaultVCpus)),
        [ResourceName.memory]: fromUnits(BigInt(autosizeMemoryGiB(totalGiB)) * GIBIBYTE),
        // set_es: ephemeral storage is not auto-sized ("Not implemented yet").
        [ResourceName.ephemeralStorage]: quantity('1Gi'),
      };
    }
    default: {
      const unexpected: never = profile;
      throw new Error(`unexpected kubelet profile ${String(unexpected)}`);
    }
  }
}

function openshiftPods(info: InstanceTypeInfo, kubelet: KubeletSettings): number {
  const pods = kubelet.maxPods ?? openshiftMaxPods;
  const perCore = kubelet.podsPerCore ?? 0;
  return perCore > 0 ? Math.min(perCore * info.VCpuInfo.DefaultVCpus, pods) : pods;
}

export function openshiftNodeResources(info: InstanceTypeInfo, profile: KubeletProfile, options: NodeResourcesOptions): NodeResourcesResult {
  const { kubelet } = options;
  const base = baseCapacity(info, options);
  const capacity: ResourceList = {
    [ResourceName.cpu]: base.cpu,
    [ResourceName.memory]: base.memory,
    [ResourceName.ephemeralStorage]: base.ephemeralStorage,
    [ResourceName.pods]: fromUnits(openshiftPods(info, kubelet)),
    ...base.extended,
  };

  // A KubeletConfig's reservations replace the profile's, key by key (MCO merges the
  // user's KubeletConfig over its template).
  const userSystemReserved = parseReservation('systemReserved', kubelet.systemReserved);
  if (!userSystemReserved.ok) return userSystemReserved;
  const kubeReserved = parseReservation('kubeReserved', kubelet.kubeReserved);
  if (!kubeReserved.ok) return kubeReserved;
  const systemReserved = { ...openshiftSystemReserved(profile, info, base.memory), ...userSystemReserved.resources };

  const signals = { [evictionSignal.memoryAvailable]: '100Mi', [evictionSignal.nodefsAvailable]: '10%', ...kubelet.evictionHard };
  const memory = evictionThreshold(`evictionHard.${evictionSignal.memoryAvailable}`, signals[evictionSignal.memoryAvailable] ?? '100Mi', base.memory);
  if (!memory.ok) return memory;
  const nodefs = evictionThreshold(`evictionHard.${evictionSignal.nodefsAvailable}`, signals[evictionSignal.nodefsAvailable] ?? '10%', base.ephemeralStorage);
  if (!nodefs.ok) return nodefs;

  const overhead = {
    kubeReserved: kubeReserved.resources,
    systemReserved,
    evictionThreshold: { [ResourceName.memory]: memory.nanos, [ResourceName.ephemeralStorage]: nodefs.nanos },
  };
  return { ok: true, resources: { capacity, overhead, allocatable: allocatableOf(capacity, overhead) } };
}
