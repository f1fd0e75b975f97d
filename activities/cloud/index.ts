export * from './cloud-provider';
export * from './domain';
export * from './errors';
export * from './ec2-client';
export * from './ec2-cloud-provider';
export * from './ports';
export { type RetryPolicy, type RetryEvent, defaultRetryPolicy } from './retry';
export { type LaunchRequest, type LaunchResult } from './launch';
export { type InstanceTypeOption, type Offering, type SubnetChoice, planFleet } from './overrides';
export { type NodeClassInput, NodeClassInputSchema } from './node-class-input';
export { type NodeClassResolution, type NodeClassCondition, type AmiResolutionOptions, pickAmi } from './node-class';
export { EC2_ARCHITECTURE, imagesByArchitecture } from './amis';
export {
  type SsmApi,
  type SsmParameterLookup,
  type SsmClientFactoryOptions,
  createSsmClientFactory,
  createSsmParameterLookup,
} from './ssm';
export { type AmiAlias, type AliasFamily, type AliasParameter, DEFAULT_SSM_PATH_PREFIX, aliasParameters, parseAmiAlias } from './ami-alias';
export { type TerminateOutcome } from './instances';
export { type LaunchTemplateContent, type LaunchTemplateRef, launchTemplateName } from './launch-template';
export { type GcResult, type NodeClaimExists, GC_MIN_AGE_MS } from './gc';
export { formatProviderId, parseProviderId } from './provider-id';
export { toApplicationFailure, withCloudFailures } from './temporal-failures';
export {
  type InstanceTypeProvider,
  type InstanceTypeProviderDeps,
  type InstanceTypeQuery,
  type RefreshIntervals,
  InstanceTypeQuerySchema,
  createInstanceTypeProvider,
  defaultRefreshIntervals,
} from './instance-types';
export {
  type OnDemandPriceSource,
  type OnDemandPrices,
  type PricingApi,
  createOnDemandPriceSource,
  createPricingClientFactory,
  fetchOnDemandPrices,
} from './on-demand-prices';
export {
  type AssumedRoleCredentials,
  type AssumedRoleCredentialsProvider,
  type AssumeRoleCredentialsFactoryOptions,
  type AssumeRoleInput,
  type AssumeRoleTuning,
  type StsAssumeRoleApi,
  ASSUME_ROLE_DEFAULTS,
  AssumeRoleError,
  assumeRoleCredentialsProvider,
  createAssumeRoleCredentialsFactory,
  createStsClientFactory,
  isAssumeRoleError,
  sessionNameFor,
  stsAssumeRoleApi,
} from './sts';
