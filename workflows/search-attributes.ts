import { defineSearchAttributeKey } from '@temporalio/common';

/**
 * autonode's typed search attributes: every NodeClaim and cluster workflow is findable in
 * the Temporal UI by cluster, pool, phase and what was launched. The local stack registers
 * them on its dev server; an operator registers them once on a real namespace
 * (`temporal operator search-attribute create`).
 */
export const AutoNodeCluster = defineSearchAttributeKey('AutoNodeCluster', 'KEYWORD');
export const AutoNodePool = defineSearchAttributeKey('AutoNodePool', 'KEYWORD');
export const AutoNodePhase = defineSearchAttributeKey('AutoNodePhase', 'KEYWORD');
export const InstanceType = defineSearchAttributeKey('InstanceType', 'KEYWORD');
export const CapacityType = defineSearchAttributeKey('CapacityType', 'KEYWORD');
export const Zone = defineSearchAttributeKey('Zone', 'KEYWORD');

export const autonodeSearchAttributes = [AutoNodeCluster, AutoNodePool, AutoNodePhase, InstanceType, CapacityType, Zone];
