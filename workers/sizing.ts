import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';

/**
 * How many workflows the control worker keeps cached between their tasks, when
 * AUTONODE_MAX_CACHED_WORKFLOWS does not say: what fits in the process's memory budget.
 *
 * Measured (docs/capacity.md, `npm run scale:idle`): RSS ≈ 300–400 MiB for an empty worker
 * plus ~1.7 MiB per *cached* workflow (each runs the bundle's modules for itself); a workflow
 * parked on a timer and evicted costs nothing. The budget is the V8 heap limit
 * (`--max-old-space-size`, which also bounds the workflow thread), or 70 % of the container's
 * memory limit when that is smaller (a pod without NODE_OPTIONS; the shipped 640 MiB of old
 * space fits its 1 GiB pod, so the heap limit decides there). `--max-old-space-size=640`
 * (V8 reports 688 MiB: old space plus the young generation) → 204 workflows. Without a heap
 * limit V8 keeps garbage up to its own default (~4 GiB here) whatever the cache: the cache
 * sizes the live set, the heap limit bounds RSS; set both.
 */
export function workflowCacheSize(o: { heapLimitMiB: number; memoryLimitMiB?: number | undefined }): number {
  const budget = o.memoryLimitMiB !== undefined ? Math.min(o.heapLimitMiB, o.memoryLimitMiB * MEMORY_LIMIT_SHARE) : o.heapLimitMiB;
  return Math.max(MIN_CACHED_WORKFLOWS, Math.floor((budget - EMPTY_WORKER_MIB) / MIB_PER_CACHED_WORKFLOW));
}

/** the part of the budget the worker needs with nothing cached (an empty worker's RSS was 296–400 MiB) */
export const EMPTY_WORKER_MIB = 340;
/** RSS per cached nodeClaimWorkflow (measured 1.5–2 MiB) */
export const MIB_PER_CACHED_WORKFLOW = 1.7;
/** of a container's memory limit, what the heap may take (the rest: native memory, code, the SDK's Core) */
export const MEMORY_LIMIT_SHARE = 0.7;
/** the SDK's floor for its own default; below this a burst of new claims thrashes the cache */
export const MIN_CACHED_WORKFLOWS = 10;

/** This process's V8 heap limit (`--max-old-space-size` plus the young generation) in MiB. */
export function heapLimitMiB(): number {
  return getHeapStatistics().heap_size_limit / MiB;
}

/**
 * The container's memory limit in MiB (cgroup v2 `memory.max`, else v1's
 * `memory.limit_in_bytes`), or undefined outside a container or when unlimited.
 */
export function containerMemoryLimitMiB(read: (path: string) => string | undefined = readIfPresent): number | undefined {
  for (const path of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    const text = read(path)?.trim();
    if (text === undefined || text === '' || text === 'max') continue;
    const bytes = Number(text);
    // cgroup v1 reports "unlimited" as a huge page-aligned number
    if (Number.isFinite(bytes) && bytes > 0 && bytes < 2 ** 60) return bytes / MiB;
  }
  return undefined;
}

const MiB = 1024 * 1024;

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
