// Builders for instance-type tests. Inputs are EC2's own facts (the bundled catalog holds
// moto's DescribeInstanceTypes data); every expected output in the tests is derived by
// hand from those facts and the documented formulas, never from running the code.
import { bundledCatalogData } from '../../../core/instancetypes/catalog';
import type { InstanceTypeInfo } from '../../../core/instancetypes/ec2-schemas';
import { buildInstanceType, type InstanceType, type InstanceTypeOptions } from '../../../core/instancetypes/instancetype';

export const now = Date.parse('2026-07-21T12:00:00Z');

export function ec2Facts(name: string): InstanceTypeInfo {
  const info = bundledCatalogData().instanceTypes.find((candidate) => candidate.InstanceType === name);
  if (info === undefined) throw new Error(`${name} is not in the bundled catalog`);
  return info;
}

/** A synthetic type for edge cases the catalog does not have; m5.large-like by default. */
export function anInstanceTypeInfo(overrides: Partial<InstanceTypeInfo> = {}): InstanceTypeInfo {
  return {
    InstanceType: 'x9.large',
    SupportedUsageClasses: ['on-demand', 'spot'],
    SupportedVirtualizationTypes: ['hvm'],
    VCpuInfo: { DefaultVCpus: 2 },
    MemoryInfo: { SizeInMiB: 8192 },
    ProcessorInfo: { SupportedArchitectures: ['x86_64'], Manufacturer: 'Intel' },
    NetworkInfo: {
      Ipv4AddressesPerInterface: 10, MaximumNetworkInterfaces: 3, DefaultNetworkCardIndex: 0,
      NetworkCards: [{ NetworkCardIndex: 0, MaximumNetworkInterfaces: 3 }],
    },
    ...overrides,
  };
}

export function options(overrides: Partial<InstanceTypeOptions> = {}): InstanceTypeOptions {
  return {
    region: 'us-east-1',
    amiFamily: 'AL2023',
    onDemandPrices: { 'm5.large': 0.096, 'x9.large': 0.1 },
    now,
    ...overrides,
  };
}

export function anInstanceType(name: string, overrides: Partial<InstanceTypeOptions> = {}, zones: readonly string[] = ['us-east-1a']): InstanceType {
  const built = buildInstanceType(ec2Facts(name), zones, options(overrides));
  if (!built.ok) throw new Error(built.reason);
  return built.instanceType;
}
