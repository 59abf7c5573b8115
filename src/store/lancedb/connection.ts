import { access, constants, mkdir, rm } from 'node:fs/promises';
import * as lancedb from '@lancedb/lancedb';
import type { Events, Locks } from '../coordination.js';
import { LocalObjectStore } from '../objects/local.js';
import { describeS3, type S3Location } from '../objects/location.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { Credentials } from '../objects/sigv4.js';
import { IndexCacheRelay } from './index-cache-relay.js';
import { IndexFileCache } from './index-file-cache.js';
import { type MirrorSource, storedTableBytes, TableMirror } from './table-mirror.js';
import { UpkeepLeader } from './upkeep.js';

const MiB = 1024 * 1024;

export interface CacheSizes {
  /** Decoded index data (HNSW graph and codes, BM25 postings, scalar indexes). */
  indexBytes: number;
  /** Manifests and file metadata. */
  metadataBytes: number;
}

/**
 * LanceDB's caches default to 6 GB (indexes) and 1 GB (metadata), and every optimize re-keys them (new
 * index ids, new versions) while the superseded entries stay until the cap is reached: under a steady
 * mixed load the cache grew many times past what a fresh open of the same data holds, one cause of the
 * RSS climb in issue #12 (docs/RELIABILITY.md). Capped here at a size that holds the live indexes of ~100k chunks; a bigger library
 * gets a cap sized to its indexes when the store is opened (`sizedCache`).
 */
export const DEFAULT_CACHE: CacheSizes = { indexBytes: 256 * MiB, metadataBytes: 64 * MiB };

/**
 * A cache smaller than the indexes decoded keeps none of the vector index for long: every search read and decoded it
 * again (at a million chunks: bench/results/search.md). Decoded, the HNSW-SQ index takes 2.3 times its files at any
 * size, and full-text and scalar indexes up to twice theirs in a large library. At twice, a million chunks' indexes
 * (1,355 MiB decoded) overflowed the cap (1,320) and every other hybrid search decoded the vector index again (~1 s).
 * Three times leaves room for the posting lists queries read and the entries an optimize supersedes.
 */
const DECODED_PER_STORED_BYTE = 3;

/**
 * The caches for the tables a connection holds now: the default, or more when their live indexes need it.
 * Sized once, at open (LanceDB cannot resize a session): a library that outgrows it is told at its next index
 * build (ChunkIndex) and sized again at the next start.
 */
export async function sizedCache(connection: lancedb.Connection, least: CacheSizes = DEFAULT_CACHE): Promise<CacheSizes> {
  const needed = cacheNeeded(await indexBytes(connection));
  return { ...least, indexBytes: Math.max(least.indexBytes, Math.ceil(needed / MiB) * MiB) };
}

/** The index cache that indexes of this many bytes on disk need to stay decoded in memory. */
export function cacheNeeded(indexBytesOnDisk: number): number {
  return DECODED_PER_STORED_BYTE * indexBytesOnDisk;
}

/** Bytes on disk of the live indexes of every table (superseded versions not counted). */
export async function indexBytes(connection: lancedb.Connection): Promise<number> {
  let total = 0;
  for (const name of await connection.tableNames()) {
    const table = await connection.openTable(name);
    try {
      total += tableIndexBytes(await table.listIndices());
    } finally {
      table.close();
    }
  }
  return total;
}

function tableIndexBytes(indices: lancedb.IndexConfig[]): number {
  return indices.reduce((sum, i) => sum + (i.sizeBytes ?? 0), 0);
}

/**
 * Shared mode: the tables live on object storage and other processes (replicas) read and write them too.
 * Tables then coordinate through these (see owned-table.ts).
 */
export interface SharedAccess {
  locks: Locks;
  events: Events;
  /** How long a superseded table version is kept: a reader or writer on another replica may still be using it. */
  keepSupersededMs: number;
  /** Commits to one table go one at a time across replicas (under `Locks.withLock('lancedb:<table>')`). */
  funnelCommits: boolean;
  /** Only the holder of the upkeep lease optimizes and prunes. */
  upkeep: UpkeepLeader;
  /**
   * A second handle on a table, with its own view, for upkeep: a pass then neither waits for this process's
   * writes and reads on the main handle nor holds them up, just as another replica's would not.
   */
  openTable(name: string): Promise<lancedb.Table>;
}

/**
 * LanceDB's object-store settings for a location, under object_store's own key names (`aws_endpoint`, not
 * `endpoint`): LanceDB adds each AWS_* variable of the environment under that name unless the key is already
 * there, and two keys for one setting are then applied in no fixed order. With `endpoint`, AWS_ENDPOINT_URL won
 * about half the time, and a replica's relay was bypassed for the store itself.
 */
function storageOptions(loc: S3Location): Record<string, string> {
  return {
    aws_region: loc.region,
    ...(loc.endpoint ? { aws_endpoint: loc.endpoint, ...(loc.endpoint.startsWith('http:') ? { allow_http: 'true' } : {}) } : {}),
    ...(loc.credentials
      ? {
          aws_access_key_id: loc.credentials.accessKeyId,
          aws_secret_access_key: loc.credentials.secretAccessKey,
          ...(loc.credentials.sessionToken ? { aws_session_token: loc.credentials.sessionToken } : {}),
        }
      : {}),
  };
}

/**
 * Shared mode: what a replica keeps of the tables on its disk for searches. Tables that fit in `maxBytes` when it
 * starts are copied whole into `mirrorDir` and searched as a local dataset (table-mirror.ts); otherwise, or without
 * `mirrorDir`, searches read through a block cache of the tables' immutable files in `dir` (index-cache-relay.ts).
 */
export interface FileCacheOptions {
  dir: string;
  mirrorDir?: string;
  maxBytes: number;
  /** The store's credentials for what the cache passes on (the SDK's default chain where no keys are set). */
  credentials: Credentials;
}

/**
 * How stale a replica's view of a table may get before a read re-checks the store for other replicas' commits
 * (a search through the file cache: starts the check and answers from the view it has). Each re-check is a
 * request to the store, so not every read; a `document_settled` event refreshes at once.
 */
export const READ_CONSISTENCY_S = 1;

/**
 * The daemon's LanceDB connection: a local directory (embedded mode, this process the only writer) or a prefix
 * on S3 shared by replicas. Only this folder imports @lancedb/lancedb.
 */
export class VectorStore {
  private closed = false;

  private constructor(
    /** The directory or s3:// URI, for messages. */
    readonly location: string,
    readonly engine: 'local' | 's3',
    readonly connection: lancedb.Connection,
    /** Where the small files next to the tables live. */
    readonly meta: ObjectStore,
    /** Present in shared mode. */
    readonly shared?: SharedAccess,
    /** Shared mode with a file cache: what LanceDB reaches the store through. */
    readonly relay?: IndexCacheRelay,
    /** Where searches read: through the file cache when there is one, else the connection itself. */
    readonly searchConnection: lancedb.Connection = connection,
    /**
     * With a file cache: how old a search handle's view of a table may get before a search has it re-checked in
     * the background (chunk-search-handle.ts). Undefined where the search connection checks by itself.
     */
    readonly searchRecheckMs?: number,
    /** Shared mode with the tables copied to this replica: what `searchConnection` opens (table-mirror.ts). */
    readonly mirror?: TableMirror,
  ) {}

  private cacheSizes: CacheSizes = DEFAULT_CACHE;

  /** The cap of the decoded-index cache this store's connections share. */
  get indexCacheBytes(): number {
    return this.cacheSizes.indexBytes;
  }

  /** What a table's indexes need beside the cache this store was opened with, in MiB, when they no longer fit it. */
  cacheShortfall(indices: lancedb.IndexConfig[]): { neededMiB: number; cacheMiB: number } | null {
    const needed = cacheNeeded(tableIndexBytes(indices));
    if (needed <= this.cacheSizes.indexBytes) return null;
    return { neededMiB: Math.ceil(needed / MiB), cacheMiB: Math.floor(this.cacheSizes.indexBytes / MiB) };
  }

  /** Without `cache`, the caches are sized for the indexes the directory holds (`sizedCache`). */
  static async open(dir: string, cache?: CacheSizes): Promise<VectorStore> {
    await mkdir(dir, { recursive: true });
    const sizes = cache ?? (await withConnection(lancedb.connect(dir), (c) => sizedCache(c)));
    const store = new VectorStore(dir, 'local', await lancedb.connect(dir, { session: session(sizes) }), new LocalObjectStore(dir));
    store.cacheSizes = sizes;
    return store;
  }

  /**
   * Tables under `<prefix>/lancedb` on S3, written by several processes; `meta` is the same place as an object
   * store (for the index info). With `fileCache`, LanceDB reads through a disk cache of the tables' immutable
   * files. The upkeep lease is tried for before this returns.
   */
  static async openS3(
    loc: S3Location,
    meta: ObjectStore & MirrorSource,
    shared: Omit<SharedAccess, 'upkeep' | 'openTable'> & {
      log?: { warn(obj: object, msg: string): void };
      upkeepRetryMs?: number;
      readConsistencyS?: number;
      fileCache?: FileCacheOptions;
    },
    cache?: CacheSizes,
  ): Promise<VectorStore> {
    const uri = describeS3(loc, 'lancedb');
    let relay: IndexCacheRelay | undefined;
    let mirror: TableMirror | undefined;
    if (shared.fileCache) {
      const { dir, mirrorDir, maxBytes, credentials } = shared.fileCache;
      // Decided once, at start, like the index cache's size: a table outgrowing it is told, and read through the
      // block cache from the next start.
      if (mirrorDir && (await storedTableBytes(meta)) <= maxBytes) {
        await rm(dir, { recursive: true, force: true });
        mirror = await TableMirror.open(mirrorDir, meta, maxBytes, shared.log);
      } else {
        if (mirrorDir) await rm(mirrorDir, { recursive: true, force: true });
        relay = new IndexCacheRelay(loc, credentials, await IndexFileCache.open(dir, maxBytes));
        await relay.start();
      }
    }
    try {
      const readConsistencyInterval = shared.readConsistencyS ?? READ_CONSISTENCY_S;
      const sizes = cache ?? (await withConnection(lancedb.connect(uri, { storageOptions: storageOptions(loc) }), (c) => sizedCache(c)));
      // One session for every connection: they share the decoded indexes and metadata.
      const caches = session(sizes);
      const connection = await lancedb.connect(uri, { storageOptions: storageOptions(loc), readConsistencyInterval, session: caches });
      // Only searches read through the cache. Writes, version checks and upkeep (which reads whole fragments once
      // to rewrite them) go to the store directly: through the relay every request crossed loopback twice, and
      // ingestion cost noticeably more CPU per chunk (bench/results/scale.md).
      // The search connection checks for new versions only when told to (LanceDB's check lists the table's
      // versions on the store, and every search in the second after it waited on one), unless every read
      // must check (0 s). A mirror's connection moves only when ChunkIndex has brought the copy up to date.
      const searchConnection = mirror
        ? await lancedb.connect(mirror.root, { session: caches })
        : relay
          ? await lancedb.connect(uri, {
              storageOptions: storageOptions({ ...loc, endpoint: relay.endpoint, credentials: relay.key }),
              ...(readConsistencyInterval === 0 ? { readConsistencyInterval } : {}),
              session: caches,
            })
          : connection;
      const upkeep = new UpkeepLeader(shared.locks, shared.log, shared.upkeepRetryMs);
      await upkeep.start();
      const { locks, events, keepSupersededMs, funnelCommits } = shared;
      const shares = { locks, events, keepSupersededMs, funnelCommits, upkeep, openTable: (name: string) => connection.openTable(name) };
      const recheckMs = mirror ? readConsistencyInterval * 1000 : relay && readConsistencyInterval > 0 ? readConsistencyInterval * 1000 : undefined;
      const store = new VectorStore(uri, 's3', connection, meta, shares, relay, searchConnection, recheckMs, mirror);
      store.cacheSizes = sizes;
      return store;
    } catch (err) {
      await relay?.close();
      throw err;
    }
  }

  /**
   * The tables under `<prefix>/lancedb` on S3 for a process that takes no part in the replicas' work (`backup`,
   * `restore`): it writes no rows, so it neither takes the upkeep lease (it would optimize and prune as the leader)
   * nor joins the commit funnel; it reads, and tags versions (version-pins.ts).
   */
  static async openS3Detached(loc: S3Location, meta: ObjectStore): Promise<VectorStore> {
    const uri = describeS3(loc, 'lancedb');
    return new VectorStore(uri, 's3', await lancedb.connect(uri, { storageOptions: storageOptions(loc), session: session(DEFAULT_CACHE) }), meta);
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Up when the store is reachable (a local directory: still there and writable) and the connection answers. */
  async probe(): Promise<{ up: boolean; error?: string }> {
    if (this.closed) return { up: false, error: 'closed' };
    try {
      if (this.engine === 'local') await access(this.location, constants.W_OK);
      await this.connection.tableNames();
      return { up: true };
    } catch (err) {
      return { up: false, error: (err as Error).message };
    }
  }

  /** Closes the connection; in shared mode the upkeep lease is given up for another replica to take. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.shared?.upkeep.stop();
    this.connection.close();
    if (this.searchConnection !== this.connection) this.searchConnection.close();
    await this.relay?.close();
  }
}

/** Runs `fn` on a connection that is closed afterwards. */
async function withConnection<T>(opening: Promise<lancedb.Connection>, fn: (c: lancedb.Connection) => Promise<T>): Promise<T> {
  const connection = await opening;
  try {
    return await fn(connection);
  } finally {
    connection.close();
  }
}

function session(cache: CacheSizes): lancedb.Session {
  return new lancedb.Session(BigInt(cache.indexBytes), BigInt(cache.metadataBytes));
}
