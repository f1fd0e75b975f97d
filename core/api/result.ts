import { type EC2NodeClass } from './ec2nodeclass';
import { type ConversionWarning, type ValidationIssue } from './issues';
import { type NodeClaim } from './nodeclaim';
import { type NodePool } from './nodepool';

/** What every accepted Karpenter document becomes: v1, defaults applied. Discriminated by kind. */
export type KarpenterObject = NodePool | NodeClaim | EC2NodeClass;

/**
 * The outcome of reading one document:
 * - `ok`: one or more v1 objects (a v1alpha5 Provisioner yields a NodePool and an
 *   EC2NodeClass), with warnings about anything that changed or was assumed;
 * - `invalid`: the document is a Karpenter kind this provider serves but is malformed;
 * - `unsupported`: a well-formed kind this provider does not implement (e.g. Azure's);
 * - `other`: not a Karpenter kind at all (Pods, Deployments…), left to other readers.
 */
export type NormaliseResult =
  | { status: 'ok'; objects: KarpenterObject[]; warnings: ConversionWarning[] }
  | { status: 'invalid'; issues: ValidationIssue[] }
  | { status: 'unsupported'; reason: string }
  | { status: 'other'; apiVersion: string; kind: string };

/** A conversion step's result before it is wrapped into NormaliseResult. */
export type Converted<T> =
  | { status: 'ok'; value: T; warnings: ConversionWarning[] }
  | { status: 'invalid'; issues: ValidationIssue[] }
  | { status: 'unsupported'; reason: string };
