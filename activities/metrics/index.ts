export { createAutonodeMetrics, type AutonodeMetrics, type AutonodeMetricsOptions, type SchedulingController } from './registry';
export { summariseCluster, type ClusterSnapshot, type ManagedNode, type PodCount } from './cluster-state';
export { cloudErrorLabel, currentActivityType, instrumentCloudProvider, instrumentClusterResolver, type InstrumentOptions } from './cloud-provider';
