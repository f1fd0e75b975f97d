/**
 * One cluster's single-instance reads, merged into shared DescribeInstances calls.
 *
 * Each NodeClaim reads EC2 on its own: the launch looks its instance up by tag before
 * CreateFleet and reads the new instance back after it, and termination reads the instance
 * before TerminateInstances. A burst of N claims was N (to 3N) calls, each of which makes
 * the server scan the account's instances, and each throttled on its own. Here concurrent
 * reads of one kind go out as one call: the instance ids as one `InstanceIds` list, the
 * NodeClaim names as the values of one `tag:karpenter.sh/nodeclaim` filter.
 *
 * Karpenter's AWS provider batches DescribeInstances too (pkg/batcher/describeinstances.go:
 * a 100 ms idle window, 1 s at most, 500 ids). This differs in when a batch leaves: at once
 * while fewer than `maxInFlight` calls of its kind are out, otherwise when one returns. A
 * quiet cluster therefore waits for no window, and the slower EC2 answers, the more reads
 * each call carries.
 *
 * An id EC2 does not know fails the whole call (InvalidInstanceID.NotFound: right after a
 * launch, or an instance long gone); the batch is then split in halves until each unknown
 * id is alone, so one missing instance costs O(log n) extra calls, not one call per id.
 */
import DataLoader from 'dataloader';
import { type Filter } from '@aws-sdk/client-ec2';
import { type Ec2Instance } from './ec2-schemas';
import { isNotFoundError } from './errors';

/** Reads the instances a query names, every page (instances.ts `describeInstances`). */
export type DescribeInstances = (query: { instanceIds?: string[]; filters?: Filter[] }) => Promise<Ec2Instance[]>;

export interface InstanceReads {
  /** The instance with this id, in any state and with any tags; undefined when EC2 does not know it. */
  byId(instanceId: string): Promise<Ec2Instance | undefined>;
  /** Instances matching `filters` and tagged `tagKey` = `value`; the other filters are the same for every call. */
  byTag(value: string): Promise<Ec2Instance[]>;
}

export interface InstanceReadOptions {
  /** calls of one kind out at once; the rest queue and leave together */
  maxInFlight?: number;
  /** ids per call (Karpenter: 500) */
  maxIds?: number;
  /** values of the tag filter per call (EC2 takes up to 200 values per filter) */
  maxTagValues?: number;
}

export const INSTANCE_READ_DEFAULTS: Required<InstanceReadOptions> = { maxInFlight: 2, maxIds: 500, maxTagValues: 200 };

/**
 * `tag` is the tag the by-tag reads look up (`karpenter.sh/nodeclaim`) and `filters` what
 * every by-tag read also requires (the cluster's tag, live states).
 */
export function createInstanceReads(
  describe: DescribeInstances,
  tag: { key: string; filters: Filter[] },
  options: InstanceReadOptions = {},
): InstanceReads {
  const o = { ...INSTANCE_READ_DEFAULTS, ...options };

  const describeIds = async (ids: readonly string[]): Promise<(Ec2Instance | undefined)[]> => {
    let found: Ec2Instance[];
    try {
      found = await describe({ instanceIds: [...ids] });
    } catch (error) {
      if (!isNotFoundError(error)) throw error;
      if (ids.length === 1) return [undefined];
      const half = Math.ceil(ids.length / 2);
      const [head, tail] = await Promise.all([describeIds(ids.slice(0, half)), describeIds(ids.slice(half))]);
      return [...head, ...tail];
    }
    const byId = new Map(found.map((i) => [i.InstanceId, i]));
    return ids.map((id) => byId.get(id));
  };

  const idGate = new Gate(o.maxInFlight);
  const ids = new DataLoader<string, Ec2Instance | undefined>(
    (keys) =>
      idGate.run(() =>
        describeIds(keys).catch((error: unknown) =>
          // one failure (throttled past the retries, denied) is every caller's
          keys.map(() => asError(error)),
        ),
      ),
    { cache: false, maxBatchSize: o.maxIds, batchScheduleFn: (dispatch) => idGate.schedule(dispatch) },
  );
  const tagGate = new Gate(o.maxInFlight);
  const tags = new DataLoader<string, Ec2Instance[]>(
    (values) =>
      tagGate.run(() =>
        describe({ filters: [...tag.filters, { Name: `tag:${tag.key}`, Values: [...values] }] }).then(
          (found) => values.map((value) => found.filter((i) => i.Tags[tag.key] === value)),
          (error: unknown) => values.map(() => asError(error)),
        ),
      ),
    { cache: false, maxBatchSize: o.maxTagValues, batchScheduleFn: (dispatch) => tagGate.schedule(dispatch) },
  );
  return { byId: (id) => ids.load(id), byTag: (value) => tags.load(value) };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * When a DataLoader batch may leave: on the next turn of the event loop while fewer than
 * `max` batches are out, otherwise as soon as one of them is done. DataLoader keeps adding
 * loads to a batch until it leaves, so a waiting batch grows.
 */
class Gate {
  private out = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly max: number) {}

  schedule(dispatch: () => void): void {
    if (this.out < this.max) this.leave(dispatch);
    else this.waiting.push(dispatch);
  }

  /** The batch's call: its slot frees when the call settles. */
  async run<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } finally {
      this.out--;
      const next = this.waiting.shift();
      if (next) this.leave(next);
    }
  }

  private leave(dispatch: () => void): void {
    this.out++;
    setImmediate(dispatch);
  }
}
