/**
 * Shared mode: a replica's local copy of the tables on object storage, which searches open as a local LanceDB
 * dataset. Read through the file cache's relay (index-cache-relay.ts), a hybrid search made dozens of HTTP requests to
 * the relay in this process, two to three times the same reads of a local directory (docs/BENCHMARKS.md#object-storage):
 * LanceDB caches decoded indexes but reads data pages on every search, and each read through an object store is a
 * request. From local files the same reads are `pread`s.
 *
 * A Lance table's files are written once and never changed (data fragments, deletion and index files, one
 * manifest per version), and a version's manifest is committed only after every file it names is in the store. So
 * a copy is brought up to date by listing the store, fetching what is new, and fetching the newest manifest last:
 * a local reader never sees a manifest whose files are not there yet. Files the store no longer has (superseded
 * versions pruned after the retention period) are removed here too. Which files a version uses is only in its
 * manifest (a protobuf this code does not parse), so superseded files still in the store are copied as well.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** What the mirror reads of the store (S3ObjectStore at the tables' root). */
export interface MirrorSource {
  /** Keys with their sizes, in ascending order of key (S3's ListObjectsV2), fetched page by page as iterated. */
  listSized(prefix: string, pageSize?: number): AsyncIterable<{ key: string; size: number }>;
  open(key: string): Promise<{ body: Readable; size: number } | null>;
}

/** What a reader uses. Transaction files are read by writers only (conflict checks). */
const CONTENT = ['data/', '_deletions/', '_indices/'] as const;
const VERSIONS = '_versions/';
/** Lance's newer manifest names: u64::MAX - version in 20 digits, so that the newest lists first. */
const DESCENDING = /^(\d{20})\.manifest$/;
const ASCENDING = /^(\d+)\.manifest$/;
const U64_MAX = 2n ** 64n - 1n;
/** A file being fetched; renamed when whole, removed when found at open (a crash mid-fetch). */
const PARTIAL = '.part-';
const DOWNLOADS_AT_ONCE = 8;
/** Manifests kept locally: the newest, and the one before for a search that opened it a moment ago. */
const MANIFESTS_KEPT = 2;

/** The version a manifest's file name stands for, or null for another file. */
export function manifestVersion(name: string): bigint | null {
  const d = DESCENDING.exec(name);
  if (d) return U64_MAX - BigInt(d[1]!);
  const a = ASCENDING.exec(name);
  return a ? BigInt(a[1]!) : null;
}

/** Bytes of every table's files a reader uses in the store (data, deletions, indexes), superseded ones included. */
export async function storedTableBytes(root: MirrorSource): Promise<number> {
  let bytes = 0;
  for await (const o of root.listSized('')) if (CONTENT.some((dir) => o.key.includes(`.lance/${dir}`))) bytes += o.size;
  return bytes;
}

export interface MirrorStats {
  /** Syncs that found a newer version and fetched it. */
  updates: number;
  files: number;
  bytes: number;
  removed: number;
}

interface TableState {
  running?: Promise<void>;
  again?: Promise<void>;
  /** Bytes of the table's files in the store at the last update. */
  bytes: number;
  /** Told once: the table is larger than the cache may hold. */
  outgrown?: boolean;
}

const MiB = 1024 * 1024;

const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'ENOENT';

export class TableMirror {
  readonly stats: MirrorStats = { updates: 0, files: 0, bytes: 0, removed: 0 };
  private readonly tables = new Map<string, TableState>();

  private constructor(
    /** The local directory LanceDB opens: `<root>/<table>.lance`, as in the store. */
    readonly root: string,
    private readonly source: MirrorSource,
    /** Past this, the operator is told (once a table) that the copy has outgrown its cache size. */
    private readonly maxBytes: number,
    private readonly log?: { warn(obj: object, msg: string): void },
  ) {}

  /** A mirror at `root`, keeping what an earlier run copied; a fetch a crash cut short is removed. */
  static async open(root: string, source: MirrorSource, maxBytes: number, log?: { warn(obj: object, msg: string): void }): Promise<TableMirror> {
    await mkdir(root, { recursive: true });
    for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.includes(PARTIAL)) await rm(join(entry.parentPath, entry.name), { force: true });
    }
    return new TableMirror(root, source, maxBytes, log);
  }

  /**
   * Brings the copy of `table` up to the newest version in the store. Resolves when a sync that started after
   * this call has ended: one under way may have listed the store before the change the caller knows of, so the
   * callers meanwhile share one more after it.
   */
  sync(table: string): Promise<void> {
    let state = this.tables.get(table);
    if (!state) this.tables.set(table, (state = { bytes: 0 }));
    const s = state;
    if (!s.running) {
      s.running = this.update(table, s).finally(() => (s.running = undefined));
      return s.running;
    }
    s.again ??= s.running
      .catch(() => undefined)
      .then(() => {
        s.again = undefined;
        return this.sync(table);
      });
    return s.again;
  }

  private async update(table: string, state: TableState): Promise<void> {
    const prefix = `${table}.lance/`;
    const newest = await this.newestManifest(prefix);
    if (!newest || (await this.has(newest))) return;
    await this.dropGone(table);
    const stored = new Map<string, number>();
    await Promise.all(
      CONTENT.map(async (dir) => {
        for await (const o of this.source.listSized(prefix + dir)) if (!o.key.includes(PARTIAL)) stored.set(o.key, o.size);
      }),
    );
    const here = await this.localFiles(prefix);
    const missing = [...stored.keys()].filter((key) => !here.has(key));
    let next = 0;
    const worker = async () => {
      while (next < missing.length) await this.fetch(missing[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(DOWNLOADS_AT_ONCE, missing.length) }, worker));
    // Last: once the manifest is here, so is every file it names.
    await this.fetch(newest);
    state.bytes = [...stored.values()].reduce((a, b) => a + b, 0);
    this.stats.updates++;
    for (const key of here) {
      if (!key.startsWith(prefix + VERSIONS) && !stored.has(key)) await this.remove(key);
    }
    const manifests = [...new Set([...here, newest])]
      .map((key) => ({ key, version: manifestVersion(key.slice(key.lastIndexOf('/') + 1)) }))
      .filter((m) => m.version !== null && m.key.startsWith(prefix + VERSIONS))
      .sort((a, b) => (a.version! > b.version! ? -1 : 1));
    for (const { key } of manifests.slice(MANIFESTS_KEPT)) await this.remove(key);
    if (state.bytes > this.maxBytes && !state.outgrown) {
      state.outgrown = true;
      this.log?.warn(
        { table, storedMiB: Math.ceil(state.bytes / MiB), cacheMiB: Math.floor(this.maxBytes / MiB) },
        'the table has outgrown --index-cache-mb: it is still copied whole to this replica, and from the next start read through the block cache instead',
      );
    }
  }

  /**
   * Removes the copies of other tables the store no longer has (the table a re-index replaced, dropped once every
   * replica had switched). Checked when a table changes, which a re-index's new table does from its first commit.
   */
  private async dropGone(current: string): Promise<void> {
    for (const entry of await readdir(this.root, { withFileTypes: true })) {
      if (!entry.isDirectory() || !entry.name.endsWith('.lance') || entry.name === `${current}.lance`) continue;
      if ((await this.newestManifest(`${entry.name}/`)) !== null) continue;
      await rm(join(this.root, entry.name), { recursive: true, force: true });
      this.tables.delete(entry.name.slice(0, -'.lance'.length));
    }
  }

  /**
   * The key of the table's newest manifest in the store, or null before the table's first commit. Lance's newer
   * names list newest first, so one key is asked for; tables named the older way are listed whole.
   */
  private async newestManifest(prefix: string): Promise<string | null> {
    for await (const { key } of this.source.listSized(prefix + VERSIONS, 1)) {
      if (DESCENDING.test(key.slice(prefix.length + VERSIONS.length))) return key;
      break;
    }
    let best: { key: string; version: bigint } | null = null;
    for await (const { key } of this.source.listSized(prefix + VERSIONS)) {
      const version = manifestVersion(key.slice(prefix.length + VERSIONS.length));
      if (version !== null && (!best || version > best.version)) best = { key, version };
    }
    return best?.key ?? null;
  }

  private path(key: string): string {
    return join(this.root, ...key.split('/'));
  }

  private async has(key: string): Promise<boolean> {
    try {
      await stat(this.path(key));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  /** Keys of the files copied so far under a table's prefix (data, deletions, indexes, manifests). */
  private async localFiles(prefix: string): Promise<Set<string>> {
    const keys = new Set<string>();
    for (const dir of [...CONTENT, VERSIONS]) {
      const base = this.path(prefix + dir);
      let entries;
      try {
        entries = await readdir(base, { recursive: true, withFileTypes: true });
      } catch (err) {
        if (isMissing(err)) continue;
        throw err;
      }
      for (const e of entries) {
        if (!e.isFile()) continue;
        keys.add(prefix + dir + join(e.parentPath, e.name).slice(base.length + 1));
      }
    }
    return keys;
  }

  /** Copies one file: written under a temporary name and renamed, so a file that is here is whole. */
  private async fetch(key: string): Promise<void> {
    const obj = await this.source.open(key);
    // Gone meanwhile: pruned from the store, so no version a search can open names it.
    if (!obj) return;
    const path = this.path(key);
    const part = `${path}${PARTIAL}${randomBytes(4).toString('hex')}`;
    await mkdir(dirname(path), { recursive: true });
    try {
      await pipeline(obj.body, createWriteStream(part));
      await rename(part, path);
    } catch (err) {
      await rm(part, { force: true });
      throw err;
    }
    this.stats.files++;
    this.stats.bytes += obj.size;
  }

  private async remove(key: string): Promise<void> {
    const path = this.path(key);
    await rm(path, { force: true });
    this.stats.removed++;
    // An index's directory goes with its last file.
    if (key.includes('/_indices/')) await rmdir(dirname(path)).catch(() => undefined);
  }
}
