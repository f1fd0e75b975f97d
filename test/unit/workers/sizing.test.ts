// The worker's defaults as shipped: the workflow cache sized from the memory budget when
// AUTONODE_MAX_CACHED_WORKFLOWS is unset, and the pre-built workflow bundle found beside the
// compiled code (workers/sizing.ts, workers/bundle.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { BUNDLE_FILES, workflowSource } from '../../../workers/bundle';
import { containerMemoryLimitMiB, workflowCacheSize } from '../../../workers/sizing';

describe('the workflow cache, sized from the memory budget', () => {
  it('the shipped heap (--max-old-space-size=640: V8 reports 688 MiB) caches about 200 workflows, the figure measured under 1 GiB', () => {
    expect(workflowCacheSize({ heapLimitMiB: 688 })).toBe(204);
    // in its 1 GiB pod the heap limit is the smaller budget
    expect(workflowCacheSize({ heapLimitMiB: 688, memoryLimitMiB: 1024 })).toBe(204);
  });

  it('a pod without a heap limit is sized from its memory limit, not from Node\'s ~4 GiB default', () => {
    expect(workflowCacheSize({ heapLimitMiB: 4144 })).toBe(2237);
    expect(workflowCacheSize({ heapLimitMiB: 4144, memoryLimitMiB: 1024 })).toBe(221);
    expect(workflowCacheSize({ heapLimitMiB: 4144, memoryLimitMiB: 2048 })).toBe(643);
  });

  it('the shipped Deployment: its heap limit decides the cache, and its memory limit leaves room for the heap', () => {
    const docs = parseAllDocuments(readFileSync(join(__dirname, '..', '..', '..', 'k8s', 'worker', 'worker.yaml'), 'utf8')).map((d) => d.toJS());
    const container = docs.find((d) => d?.kind === 'Deployment').spec.template.spec.containers.find((c: { name: string }) => c.name === 'worker');
    const nodeOptions = container.env.find((e: { name: string }) => e.name === 'NODE_OPTIONS').value as string;
    expect(nodeOptions).toMatch(/--max-old-space-size=\d+/);
    const heap = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit))'], { env: { ...process.env, NODE_OPTIONS: nodeOptions }, encoding: 'utf8' })) / 2 ** 20;
    const limit = /^(\d+)Mi$/.exec(container.resources.limits.memory as string);
    expect(limit).not.toBeNull();
    const memoryLimitMiB = Number(limit?.[1]);
    expect(workflowCacheSize({ heapLimitMiB: heap, memoryLimitMiB })).toBe(workflowCacheSize({ heapLimitMiB: heap }));
    expect(workflowCacheSize({ heapLimitMiB: heap })).toBe(129);
  });

  it('never goes below 10, however small the budget', () => {
    expect(workflowCacheSize({ heapLimitMiB: 256 })).toBe(10);
    expect(workflowCacheSize({ heapLimitMiB: 4144, memoryLimitMiB: 128 })).toBe(10);
  });

  it('reads the container limit from cgroup v2, then v1, and takes "max" or v1\'s huge number as none', () => {
    const files = (map: Record<string, string>) => (path: string) => map[path];
    expect(containerMemoryLimitMiB(files({ '/sys/fs/cgroup/memory.max': '1073741824\n' }))).toBe(1024);
    expect(containerMemoryLimitMiB(files({ '/sys/fs/cgroup/memory.max': 'max\n' }))).toBeUndefined();
    expect(containerMemoryLimitMiB(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '536870912' }))).toBe(512);
    expect(containerMemoryLimitMiB(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712' }))).toBeUndefined();
    expect(containerMemoryLimitMiB(files({}))).toBeUndefined();
  });
});

describe('where the worker\'s workflows come from', () => {
  const dist = join('/app', 'dist', 'workers');
  const present = (...files: string[]) => (path: string) => files.includes(path);
  const base = { workersDir: dist, workflowsPath: '/app/dist/workflows/index.js' };

  it('AUTONODE_WORKFLOW_BUNDLE when set', () => {
    expect(workflowSource({ ...base, configured: '/bundles/b.js', variant: 'plain', compiled: true, exists: present() })).toEqual({ workflowBundle: { codePath: '/bundles/b.js' } });
  });

  it('else the bundle `npm run build` wrote beside the compiled code, of the variant the data converter needs', () => {
    const exists = present(join('/app', 'dist', BUNDLE_FILES.plain), join('/app', 'dist', BUNDLE_FILES.encrypted));
    expect(workflowSource({ ...base, configured: undefined, variant: 'plain', compiled: true, exists })).toEqual({ workflowBundle: { codePath: '/app/dist/workflow-bundle.js' } });
    expect(workflowSource({ ...base, configured: undefined, variant: 'encrypted', compiled: true, exists })).toEqual({ workflowBundle: { codePath: '/app/dist/workflow-bundle-encrypted.js' } });
  });

  it('else the workflows, bundled at start: a build without bundles, or a run from source (whose dist/ may be stale)', () => {
    expect(workflowSource({ ...base, configured: undefined, variant: 'plain', compiled: true, exists: present() })).toEqual({ workflowsPath: '/app/dist/workflows/index.js' });
    const fromSource = { workersDir: '/repo/workers', workflowsPath: '/repo/workflows/index.ts' };
    expect(workflowSource({ ...fromSource, configured: undefined, variant: 'plain', compiled: false, exists: () => true })).toEqual({ workflowsPath: '/repo/workflows/index.ts' });
  });
});
