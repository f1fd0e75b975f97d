// EC2 instance types → labels, capacity, allocatable and priced offerings.
export * from './ec2-schemas';
export * from './kubelet';
export * from './bootstrap-tags';
export * from './block-devices';
export * from './labels';
export * from './capacity';
export * from './overhead';
export * from './karpenter-overhead';
export * from './openshift';
export * from './node-resources';
export * from './pricing';
export * from './instancetype';
export * from './catalog';
