/**
 * The instance-type catalog's last good reads, kept on disk so a worker that restarts does
 * not start cold. A cold catalog is three paged EC2 reads (seconds on AWS, far more through
 * throttling), and every packing attempt waits for it: in `npm run scale`'s chaos, a worker
 * killed every minute spent most of its life rebuilding the catalog and its planBatch
 * attempts rarely finished. In a pod the directory is an emptyDir: it outlives the
 * container's restarts, not the pod.
 *
 * A stored read is only ever a cache: one that is missing, unreadable or fails its schema
 * is ignored (with a warning) and read from EC2 again; a failed write is a warning too.
 * Files are written whole (a temporary file renamed over the old), so a process killed
 * mid-write leaves the previous copy.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { parseJsonWith } from '../../core/json';
import { type CloudLogger } from './ports';
import { type Snapshot } from './refreshing-value';

/** One stored read: its rows and when they were loaded from EC2. */
export interface PersistedRead<T> {
  read(): Promise<Snapshot<T> | undefined>;
  write(snapshot: Snapshot<T>): Promise<void>;
}

export interface CatalogStore {
  /** The stored copy of one read, its rows checked by `rows` when read back. */
  read<T>(key: CatalogKey, rows: z.ZodType<T>): PersistedRead<T>;
}

export interface CatalogKey {
  /** whose view of the region: offerings differ by account, so one cluster's (its name) */
  scope: string;
  region: string;
  /** DescribeInstanceTypes, DescribeInstanceTypeOfferings, DescribeSpotPriceHistory */
  source: string;
}

const FileSchema = z.object({ version: z.literal(1), loadedAt: z.number().int().nonnegative(), rows: z.unknown() });

/** A file name any of the key's parts can make safely (no separators, no dot-dot). */
const fileName = (key: CatalogKey): string => `${[key.scope, key.region, key.source].map((p) => p.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_')).join('--')}.json`;

export function createFileCatalogStore(dir: string, logger: CloudLogger): CatalogStore {
  let made: Promise<unknown> | undefined;
  return {
    read<T>(key: CatalogKey, rows: z.ZodType<T>): PersistedRead<T> {
      const path = join(dir, fileName(key));
      return {
        async read() {
          let text: string;
          try {
            text = await readFile(path, 'utf8');
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOENT') logger.warn({ path, error: String(error) }, `the stored ${key.source} could not be read; reading EC2`);
            return undefined;
          }
          const file = parseJsonWith(FileSchema, text);
          const value = file ? rows.safeParse(file.rows) : undefined;
          if (!file || !value?.success) {
            logger.warn({ path }, `the stored ${key.source} is not a catalog this version reads; reading EC2`);
            return undefined;
          }
          return { value: value.data, loadedAt: file.loadedAt };
        },
        async write(snapshot) {
          try {
            made ??= mkdir(dir, { recursive: true, mode: 0o700 });
            await made;
            const temporary = `${path}.${process.pid}.tmp`;
            await writeFile(temporary, JSON.stringify({ version: 1, loadedAt: snapshot.loadedAt, rows: snapshot.value }), { mode: 0o600 });
            await rename(temporary, path);
          } catch (error) {
            made = undefined;
            logger.warn({ path, error: String(error) }, `the ${key.source} read could not be stored; the next start reads EC2`);
          }
        },
      };
    },
  };
}
