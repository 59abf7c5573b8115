/**
 * Opens where the index and the originals live, from `--storage`: the data dir (embedded mode, as always), or an
 * S3 bucket prefix that replicas share (`<prefix>/lancedb` for the tables and their index info, `<prefix>/files`
 * for originals). `serve` and `reindex` both open storage here, so they read the same configuration.
 */
import { join } from 'node:path';
import { FileStore } from '../store/objects/originals.js';
import { RecentOriginals } from '../store/objects/recent-originals.js';
import type { Events, Locks } from '../store/coordination.js';
import { VectorStore } from '../store/lancedb/connection.js';
import { LocalObjectStore } from '../store/objects/local.js';
import type { ObjectStore } from '../store/objects/object-store.js';
import { parseS3Location } from '../store/objects/location.js';
import { S3ObjectStore, s3ErrorMessage } from '../store/objects/s3.js';
import type { ServeConfig } from './config.js';
import { type HealthProbe, REMOTE_PROBE_REUSE_MS, sharedProbe } from './health.js';

const HOUR = 3600_000;
const MiB = 1024 * 1024;

/**
 * Shared mode: an original nobody references is removed at startup only once it is this old, since another
 * replica may have placed it a moment ago and be about to record its document.
 */
export const ORPHAN_MIN_AGE_MS = 6 * HOUR;

/**
 * Shared mode: commits to one table go one at a time across replicas. Left to LanceDB's optimistic retries, four
 * writers on RGW saw single adds take many seconds at the tail; funnelled, the tail is cut at about the same
 * commits per second (docs/BENCHMARKS.md#object-storage, bench/results/lancedb-s3.md).
 */
const FUNNEL_COMMITS = true;

const vectorStoreProbe =
  (vectors: VectorStore): HealthProbe =>
  async () => ({ status: (await vectors.probe()).up ? 'up' : 'down', engine: 'lancedb', storage: vectors.engine });

export interface Storage {
  engine: 'local' | 's3';
  vectors: VectorStore;
  files: FileStore;
  /** Unreferenced originals younger than this are left by the startup sweep. */
  orphanMinAgeMs: number;
  /** Health components of the storage: `vector_store`, and `s3` in shared mode. */
  probes: Record<string, HealthProbe>;
  /** The bucket prefix every replica shares (S3 only): where the secrets key is kept when no option gives it. */
  shared?: ObjectStore;
  close(): Promise<void>;
}

/** A store that cannot be used: unreachable, or unsafe for several writers. */
class StorageError extends Error {
  override name = 'StorageError';
}

/**
 * Where a replica keeps its cache of the index's immutable files. The operator commands read the index once and
 * go: only `serve` passes a size.
 */
export const indexCacheDir = (dataDir: string): string => join(dataDir, 'cache', 'index');
/** Where a replica keeps its copy of tables that fit in the cache (table-mirror.ts). */
export const tableMirrorDir = (dataDir: string): string => join(dataDir, 'cache', 'tables');

export async function openStorage(
  config: Pick<ServeConfig, 'dataDir' | 'storage' | 'indexRetentionHours'> & { indexCacheMb?: number; jobLease?: number },
  env: NodeJS.ProcessEnv,
  coordination: { locks: Locks; events: Events; log?: { warn(obj: object, msg: string): void } },
): Promise<Storage> {
  if (!config.storage) {
    const vectors = await VectorStore.open(join(config.dataDir, 'lancedb'));
    const root = join(config.dataDir, 'files');
    const files = new FileStore(new LocalObjectStore(root), join(root, 'tmp'));
    await files.init();
    return { engine: 'local', vectors, files, orphanMinAgeMs: 0, probes: { vector_store: vectorStoreProbe(vectors) }, close: () => vectors.close() };
  }

  const loc = parseS3Location(config.storage, env);
  const root = await S3ObjectStore.connect(loc);
  try {
    let problem: string | null;
    try {
      problem = await root.conditionalPutProblem();
    } catch (err) {
      throw new StorageError(`could not use the object store ${root.location}${loc.endpoint ? ` at ${loc.endpoint}` : ''}: ${s3ErrorMessage(err)}`);
    }
    if (problem) {
      throw new StorageError(
        `refusing the object store ${root.location}${loc.endpoint ? ` at ${loc.endpoint}` : ''}: it does not honour conditional PUT (${problem}). ` +
          'Replicas committing to one LanceDB table at once would overwrite each other and silently lose rows. ' +
          'Use a store that enforces If-None-Match: * (AWS S3, Ceph RGW, MinIO, Cloudflare R2).',
      );
    }
    const cacheMb = config.indexCacheMb ?? 0;
    const vectors = await VectorStore.openS3(loc, root.at('lancedb'), {
      ...coordination,
      keepSupersededMs: config.indexRetentionHours * HOUR,
      funnelCommits: FUNNEL_COMMITS,
      // A daemon's --job-lease: a dead replica's upkeep is taken over within a quarter of it (30 s by default).
      ...(config.jobLease ? { upkeepRetryMs: (config.jobLease * 1000) / 4 } : {}),
      ...(cacheMb > 0 ? { fileCache: { dir: indexCacheDir(config.dataDir), mirrorDir: tableMirrorDir(config.dataDir), maxBytes: cacheMb * MiB, credentials: loc.credentials ?? root.client.config.credentials } } : {}),
    });
    const files = new FileStore(root.at('files'), join(config.dataDir, 'tmp'), new RecentOriginals({ dir: join(config.dataDir, 'cache', 'originals') }));
    await files.init();
    return {
      engine: 's3',
      vectors,
      files,
      orphanMinAgeMs: ORPHAN_MIN_AGE_MS,
      shared: root,
      probes: {
        vector_store: sharedProbe(vectorStoreProbe(vectors), REMOTE_PROBE_REUSE_MS),
        s3: sharedProbe(async () => ((await root.probe()).up ? { status: 'up' } : { status: 'down' }), REMOTE_PROBE_REUSE_MS),
      },
      async close() {
        await vectors.close();
        root.close();
      },
    };
  } catch (err) {
    root.close();
    throw err;
  }
}
