/**
 * A suite on a real Ceph RADOS Gateway with replicas' chunk indexes on it: RGW started once for the suite, a
 * fresh library (S3 prefix) per test, and every replica opened in a test closed after it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { LocalEvents, LocalLocks } from '../../src/store/coordination.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { parseS3Location } from '../../src/store/objects/location.js';
import { S3ObjectStore } from '../../src/store/objects/s3.js';
import { type Rgw, startRgw } from './rgw.js';
import { logS3Requests, type S3RequestLog } from './s3-request-log.js';

type OpenOptions = Parameters<typeof VectorStore.openS3>[2];

export interface ReplicaOptions extends Partial<Omit<OpenOptions, 'fileCache'>> {
  /** A request log's endpoint, to count what this replica asks of the store; RGW itself by default. */
  endpoint?: string;
  /** The replica's file cache (the store's credentials are added). */
  fileCache?: { dir: string; mirrorDir?: string; maxBytes: number };
}

export type Replica = Awaited<ReturnType<RgwReplicas['replica']>>;

export interface RgwReplicas {
  readonly rgw: Rgw;
  /** Requests to RGW through the suite's log (with `log: true`). */
  readonly log: S3RequestLog;
  /** A temporary directory for the suite's caches. */
  readonly dir: string;
  /** A fresh prefix per test: a library of its own. */
  library(): string;
  /** One replica's view of a library: its own S3 client and LanceDB connection. */
  replica(url: string, opts?: ReplicaOptions): Promise<{ store: VectorStore; index: ChunkIndex; root: S3ObjectStore; close(): Promise<void> }>;
  /** Closes a replica before the test ends (a restart, a death). */
  close(replica: { close(): Promise<void> }): Promise<void>;
}

/**
 * Registers the suite's hooks. With `asReplica`, the AWS variables name RGW while the suite runs, as they do for a
 * replica (LanceDB reads them too); with `log`, every replica's requests go through one request log.
 */
export function rgwReplicas(opts: { log?: boolean; asReplica?: boolean; embedderId: string }): RgwReplicas {
  let rgw: Rgw | undefined;
  let log: S3RequestLog | undefined;
  let dir: string | undefined;
  let n = 0;
  const opened: { close(): Promise<void> }[] = [];
  const saved = { ...process.env };
  beforeAll(async () => {
    rgw = await startRgw();
    if (opts.log) log = await logS3Requests(rgw.endpoint);
    if (opts.asReplica) Object.assign(process.env, rgw.env());
    dir = await mkdtemp(join(tmpdir(), 'docsearch-rgw-replicas-'));
  });
  afterEach(async () => {
    for (const c of opened.splice(0).reverse()) await c.close();
  });
  afterAll(async () => {
    process.env = saved;
    await log?.close();
    await rgw?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return {
    get rgw() {
      return rgw!;
    },
    get log() {
      return log!;
    },
    get dir() {
      return dir!;
    },
    library: () => `s3://${rgw!.bucket}/lib-${n++}`,
    async replica(url, { endpoint, fileCache, ...shared } = {}) {
      const loc = parseS3Location(url, { ...rgw!.env(), AWS_ENDPOINT_URL: endpoint ?? log?.endpoint ?? rgw!.endpoint });
      const root = await S3ObjectStore.connect(loc);
      const store = await VectorStore.openS3(loc, root.at('lancedb'), {
        locks: new LocalLocks(),
        events: new LocalEvents(),
        keepSupersededMs: 3600_000,
        funnelCommits: false,
        ...shared,
        ...(fileCache ? { fileCache: { ...fileCache, credentials: loc.credentials! } } : {}),
      });
      // What these replicas test is what LanceDB reads through the copy and the file cache: a small table held in
      // memory (memory-copy.ts) would answer the vector scans and takes itself.
      const index = await ChunkIndex.open(store, { embedderId: opts.embedderId }, { ann: { memoryRows: 0 } });
      const handle = {
        store,
        index,
        root,
        async close() {
          await index.close();
          await store.close();
          root.close();
        },
      };
      opened.push(handle);
      return handle;
    },
    async close(replica) {
      opened.splice(opened.indexOf(replica), 1);
      await replica.close();
    },
  };
}
