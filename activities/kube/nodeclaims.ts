import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { type Condition } from '../../core/api';
import { StoredNodeClaimSchema, type StoredNodeClaim } from '../../core/api/nodeclaim';
import { setCondition, withReadyCondition, type ConditionUpdate } from '../../core/lifecycle';
import { type KubeClients } from './clients';
import { isNotFound } from './errors';
import { listItems } from './lists';

const group = 'karpenter.sh';
const version = 'v1';
const plural = 'nodeclaims';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export { StoredNodeClaimSchema, type StoredNodeClaim };


export interface NodeClaimStatusPatch {
  providerID?: string;
  imageID?: string;
  nodeName?: string;
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  conditions?: ConditionUpdate[];
}

/** NodeClaim custom objects in one guest cluster: read, finalizers, annotations, status, delete. */
export class NodeClaimStore {
  constructor(private readonly kube: KubeClients) {}

  async get(name: string): Promise<StoredNodeClaim | undefined> {
    try {
      return StoredNodeClaimSchema.parse(await this.kube.customObjects.getClusterCustomObject({ group, version, plural, name }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async list(): Promise<StoredNodeClaim[]> {
    return listItems(await this.kube.customObjects.listClusterCustomObject({ group, version, plural })).map((item) => StoredNodeClaimSchema.parse(item));
  }

  /** The claims carrying `label=value`. */
  async listLabelled(label: string, value: string): Promise<StoredNodeClaim[]> {
    return listItems(await this.kube.customObjects.listClusterCustomObject({ group, version, plural, labelSelector: `${label}=${value}` })).map((item) => StoredNodeClaimSchema.parse(item));
  }

  /** Merge patch guarded by resourceVersion: a concurrent writer makes this fail (409) and be retried. */
  private async patch(claim: StoredNodeClaim, body: object): Promise<StoredNodeClaim> {
    const patched = await this.kube.customObjects.patchClusterCustomObject(
      { group, version, plural, name: claim.metadata.name, body: { metadata: { resourceVersion: claim.metadata.resourceVersion }, ...body } },
      mergePatch,
    );
    return StoredNodeClaimSchema.parse(patched);
  }

  async ensureFinalizer(claim: StoredNodeClaim, finalizer: string): Promise<StoredNodeClaim> {
    const finalizers = claim.metadata.finalizers ?? [];
    if (finalizers.includes(finalizer)) return claim;
    return this.patch(claim, { metadata: { resourceVersion: claim.metadata.resourceVersion, finalizers: [...finalizers, finalizer] } });
  }

  async removeFinalizer(claim: StoredNodeClaim, finalizer: string): Promise<void> {
    const finalizers = claim.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return;
    try {
      await this.patch(claim, { metadata: { resourceVersion: claim.metadata.resourceVersion, finalizers: finalizers.filter((f) => f !== finalizer) } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async annotate(claim: StoredNodeClaim, annotations: Record<string, string>): Promise<StoredNodeClaim> {
    const current = claim.metadata.annotations ?? {};
    if (Object.entries(annotations).every(([k, v]) => current[k] === v)) return claim;
    return this.patch(claim, { metadata: { resourceVersion: claim.metadata.resourceVersion, annotations } });
  }

  async patchLabels(claim: StoredNodeClaim, labels: Record<string, string>): Promise<StoredNodeClaim> {
    const current = claim.metadata.labels ?? {};
    if (Object.entries(labels).every(([k, v]) => current[k] === v)) return claim;
    return this.patch(claim, { metadata: { resourceVersion: claim.metadata.resourceVersion, labels } });
  }

  /** Status through the status subresource; conditions merged one by one (see setCondition). */
  async patchStatus(claim: StoredNodeClaim, patch: NodeClaimStatusPatch, nowIso: string): Promise<StoredNodeClaim> {
    let conditions: Condition[] = claim.status?.conditions ?? [];
    for (const update of patch.conditions ?? []) conditions = setCondition(conditions, update, nowIso, claim.metadata.generation);
    if (patch.conditions) conditions = withReadyCondition(conditions, nowIso, claim.metadata.generation);
    const { conditions: _ignored, ...fields } = patch;
    const status = { ...fields, ...(patch.conditions ? { conditions } : {}) };
    const patched = await this.kube.customObjects.patchClusterCustomObjectStatus(
      { group, version, plural, name: claim.metadata.name, body: { metadata: { resourceVersion: claim.metadata.resourceVersion }, status } },
      mergePatch,
    );
    return StoredNodeClaimSchema.parse(patched);
  }

  async delete(name: string): Promise<void> {
    try {
      await this.kube.customObjects.deleteClusterCustomObject({ group, version, plural, name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
