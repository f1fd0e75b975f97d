import { z } from 'zod';
import { reportIssue } from './issues';
import { QUANTITY, durationSchema, quantitySchema } from './primitives';

// Karpenter v1.0's typed kubelet settings (karpenter.md §2.1). They live on the
// EC2NodeClass in v1; v1beta1 had them on the NodePool/NodeClaim and v1alpha5 on the
// Provisioner, which is why this schema is shared.

const RESERVED_RESOURCES = ['cpu', 'memory', 'ephemeral-storage', 'pid'] as const;
const EVICTION_SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
] as const;

const PERCENT = /^(\d{1,2}(\.\d{1,2})?|100(\.0{1,2})?)%$/;

const evictionThresholdSchema = z.string().superRefine((value, ctx) => {
  if (!PERCENT.test(value) && !QUANTITY.test(value)) {
    reportIssue(ctx, { message: 'is neither a percentage nor a quantity', fix: 'write e.g. "10%" or "100Mi"' });
  }
});

const reservedSchema = z.partialRecord(z.enum(RESERVED_RESOURCES), quantitySchema);
const evictionSchema = z.partialRecord(z.enum(EVICTION_SIGNALS), evictionThresholdSchema);

export const kubeletSchema = z
  .strictObject({
    clusterDNS: z.array(z.string()).optional(),
    maxPods: z.number().int().min(0).optional(),
    podsPerCore: z.number().int().min(0).optional(),
    systemReserved: reservedSchema.optional(),
    kubeReserved: reservedSchema.optional(),
    evictionHard: evictionSchema.optional(),
    evictionSoft: evictionSchema.optional(),
    evictionSoftGracePeriod: z.partialRecord(z.enum(EVICTION_SIGNALS), durationSchema).optional(),
    evictionMaxPodGracePeriod: z.number().int().optional(),
    imageGCHighThresholdPercent: z.number().int().min(0).max(100).optional(),
    imageGCLowThresholdPercent: z.number().int().min(0).max(100).optional(),
    cpuCFSQuota: z.boolean().optional(),
  })
  .superRefine((kubelet, ctx) => {
    const high = kubelet.imageGCHighThresholdPercent;
    const low = kubelet.imageGCLowThresholdPercent;
    if (high !== undefined && low !== undefined && high <= low) {
      reportIssue(ctx, {
        path: ['imageGCHighThresholdPercent'],
        message: `imageGCHighThresholdPercent (${high}) must be greater than imageGCLowThresholdPercent (${low})`,
        fix: 'raise the high threshold or lower the low one',
      });
    }
    for (const signal of Object.keys(kubelet.evictionSoft ?? {})) {
      if (!Object.keys(kubelet.evictionSoftGracePeriod ?? {}).includes(signal)) {
        reportIssue(ctx, {
          path: ['evictionSoft', signal],
          message: `soft eviction threshold ${signal} has no grace period`,
          fix: `add evictionSoftGracePeriod.${signal}, e.g. "1m"`,
        });
      }
    }
  })
  .meta({
    'x-kubernetes-validations': [
      {
        message: 'imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent',
        rule: 'has(self.imageGCHighThresholdPercent) && has(self.imageGCLowThresholdPercent) ? self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent : true',
      },
      {
        message: 'every evictionSoft signal needs an evictionSoftGracePeriod',
        rule: 'has(self.evictionSoft) ? self.evictionSoft.all(e, (e in self.evictionSoftGracePeriod)) : true',
      },
    ],
  });
export type Kubelet = z.output<typeof kubeletSchema>;
