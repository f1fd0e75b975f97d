// The parts of EC2's DescribeInstanceTypes, DescribeInstanceTypeOfferings and
// DescribeSpotPriceHistory answers that autonode reads, in the API's own PascalCase shape
// (as the AWS SDK v3 returns them and as moto serves them). The bundled catalog stores
// the same shape, so live and offline data take one code path. Unknown fields are
// dropped; fields AWS leaves out for some types (Hypervisor on metal, GpuInfo, …) are
// optional.
import { z } from 'zod';

const gpuSchema = z.object({
  Name: z.string().optional(),
  Manufacturer: z.string().optional(),
  Count: z.number().int().nonnegative().optional(),
  MemoryInfo: z.object({ SizeInMiB: z.number().int().nonnegative().optional() }).optional(),
});

const acceleratorSchema = z.object({
  Name: z.string().optional(),
  Manufacturer: z.string().optional(),
  Count: z.number().int().nonnegative().optional(),
});

const neuronDeviceSchema = z.object({
  Name: z.string().optional(),
  Count: z.number().int().nonnegative().optional(),
  CoreInfo: z.object({ Count: z.number().int().nonnegative().optional() }).optional(),
});

const networkCardSchema = z.object({
  NetworkCardIndex: z.number().int().nonnegative().optional(),
  MaximumNetworkInterfaces: z.number().int().nonnegative().optional(),
  BaselineBandwidthInGbps: z.number().nonnegative().optional(),
});

export const instanceTypeInfoSchema = z.object({
  InstanceType: z.string().min(1),
  BareMetal: z.boolean().optional(),
  BurstablePerformanceSupported: z.boolean().optional(),
  Hypervisor: z.string().optional(),
  SupportedUsageClasses: z.array(z.string()).default([]),
  SupportedVirtualizationTypes: z.array(z.string()).optional(),
  VCpuInfo: z.object({ DefaultVCpus: z.number().int().positive() }),
  MemoryInfo: z.object({ SizeInMiB: z.number().int().positive() }),
  ProcessorInfo: z.object({
    SupportedArchitectures: z.array(z.string()).default([]),
    Manufacturer: z.string().optional(),
    SustainedClockSpeedInGhz: z.number().nonnegative().optional(),
  }),
  NetworkInfo: z.object({
    NetworkPerformance: z.string().optional(),
    MaximumNetworkInterfaces: z.number().int().nonnegative().optional(),
    Ipv4AddressesPerInterface: z.number().int().nonnegative(),
    DefaultNetworkCardIndex: z.number().int().nonnegative().optional(),
    NetworkCards: z.array(networkCardSchema).optional(),
    EncryptionInTransitSupported: z.boolean().optional(),
    EfaInfo: z.object({ MaximumEfaInterfaces: z.number().int().nonnegative().optional() }).optional(),
  }),
  EbsInfo: z.object({
    EbsOptimizedSupport: z.string().optional(),
    EbsOptimizedInfo: z.object({ MaximumBandwidthInMbps: z.number().int().nonnegative().optional() }).optional(),
  }).optional(),
  InstanceStorageInfo: z.object({
    TotalSizeInGB: z.number().int().nonnegative().optional(),
    NvmeSupport: z.string().optional(),
  }).optional(),
  GpuInfo: z.object({ Gpus: z.array(gpuSchema).default([]) }).optional(),
  InferenceAcceleratorInfo: z.object({ Accelerators: z.array(acceleratorSchema).default([]) }).optional(),
  NeuronInfo: z.object({ NeuronDevices: z.array(neuronDeviceSchema).default([]) }).optional(),
});
export type InstanceTypeInfo = z.infer<typeof instanceTypeInfoSchema>;

/** DescribeInstanceTypeOfferings with LocationType=availability-zone. */
export const instanceTypeOfferingSchema = z.object({
  InstanceType: z.string().min(1),
  Location: z.string().min(1),
  LocationType: z.literal('availability-zone').optional(),
});
export type InstanceTypeOffering = z.infer<typeof instanceTypeOfferingSchema>;

/** The SDK returns Date objects, moto and JSON files return ISO strings. */
const timestampSchema = z.union([z.date(), z.string()]).transform((value, context) => {
  const millis = value instanceof Date ? value.getTime() : Date.parse(value);
  if (Number.isNaN(millis)) {
    context.addIssue({ code: 'custom', message: `not a timestamp: ${String(value)}` });
    return z.NEVER;
  }
  return millis;
});

export const spotPriceSchema = z.object({
  InstanceType: z.string().min(1),
  AvailabilityZone: z.string().min(1),
  ProductDescription: z.string().optional(),
  SpotPrice: z.string().regex(/^[0-9]+(\.[0-9]+)?$/).transform(Number),
  /** Epoch milliseconds. */
  Timestamp: timestampSchema,
});
export type SpotPrice = z.infer<typeof spotPriceSchema>;
