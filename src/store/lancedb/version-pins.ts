/**
 * Table versions held for a backup. A backup copies each table as it was at one version while the daemon goes on
 * writing, compacting and pruning; a LanceDB tag on that version keeps its files from being pruned until the
 * backup has copied them (a prune that would reach a tagged version fails instead, and the daemon waits: see
 * owned-table.ts). Tags are named `docsearch-backup-…`; only one backup of a library runs at a time, so one that
 * finds such tags at its start knows them to be left by a backup that was killed, and removes them.
 */
import type * as lancedb from '@lancedb/lancedb';
import type { VectorStore } from './connection.js';

const TAG_PREFIX = 'docsearch-backup-';

export interface PinnedTable {
  /** The table's name: its files are under `<name>.lance/`. */
  name: string;
  version: number;
  rows: number;
}

/** The error LanceDB gives a prune that would remove a tagged version. */
export const isTaggedVersionCleanup = (err: unknown): boolean => /tagged version/i.test((err as Error)?.message ?? '');

async function eachTable(store: VectorStore, fn: (table: lancedb.Table, name: string) => Promise<void>): Promise<void> {
  for (const name of await store.connection.tableNames()) {
    const table = await store.connection.openTable(name);
    try {
      await fn(table, name);
    } finally {
      table.close();
    }
  }
}

/** Removes the tags of earlier backups (call while holding the library's backup lock); returns how many. */
export async function removeBackupTags(store: VectorStore): Promise<number> {
  let removed = 0;
  await eachTable(store, async (table) => {
    const tags = await table.tags();
    for (const tag of Object.keys(await tags.list())) {
      if (!tag.startsWith(TAG_PREFIX)) continue;
      await tags.delete(tag);
      removed++;
    }
  });
  return removed;
}

/** Tags the latest version of every table for backup `id`; returns each table's version and rows there. */
export async function pinLatest(store: VectorStore, id: string): Promise<PinnedTable[]> {
  const out: PinnedTable[] = [];
  await eachTable(store, async (table, name) => {
    await table.checkoutLatest();
    const version = await table.version();
    await (await table.tags()).create(`${TAG_PREFIX}${id}`, version);
    out.push({ name, version, rows: await table.countRows() });
  });
  return out;
}

/** What a table holds of one document at a version: its rows, and the project they are under. */
export interface DocumentRows {
  rows: number;
  project: string;
}

/**
 * Each document's rows in a chunks table at a pinned version. Only two columns are read (no vectors, no text), as
 * Arrow batches streamed through: one pass over a million rows holds no more than one entry per document.
 */
export async function documentRowsAt(store: VectorStore, pinned: PinnedTable): Promise<Map<string, DocumentRows>> {
  const table = await store.connection.openTable(pinned.name);
  try {
    await table.checkout(pinned.version);
    const out = new Map<string, DocumentRows>();
    const batches = table.query().select(['document_id', 'project_id']) as AsyncIterable<{ numRows: number; getChild(name: string): { get(i: number): unknown } | null }>;
    for await (const batch of batches) {
      const [documents, projects] = [batch.getChild('document_id')!, batch.getChild('project_id')!];
      for (let i = 0; i < batch.numRows; i++) {
        const id = documents.get(i) as string;
        const had = out.get(id);
        if (had) had.rows++;
        else out.set(id, { rows: 1, project: projects.get(i) as string });
      }
    }
    return out;
  } finally {
    table.close();
  }
}

/** Removes backup `id`'s tags (the pruning they held back goes on). */
export async function unpin(store: VectorStore, id: string): Promise<void> {
  await eachTable(store, async (table) => {
    const tags = await table.tags();
    if (`${TAG_PREFIX}${id}` in (await tags.list())) await tags.delete(`${TAG_PREFIX}${id}`);
  });
}

/** What each table of a restored index holds at its latest version. */
export async function latestVersions(store: VectorStore): Promise<PinnedTable[]> {
  const out: PinnedTable[] = [];
  await eachTable(store, async (table, name) => {
    out.push({ name, version: await table.version(), rows: await table.countRows() });
  });
  return out;
}

const U64_MAX = (1n << 64n) - 1n;

/**
 * Which of a table's files a copy of one version takes, by its path under `<name>.lance/`: the data, deletion and
 * index files (immutable, named uniquely; those of other versions come along, and are unused), and of the
 * version manifests only that version's, so the copy's latest version is it. Tags, the latest-version hint and
 * files still being written (temporary names) stay behind.
 */
export function fileOfVersion(path: string, version: number): boolean {
  if (path.startsWith('_refs/') || path.includes('#') || path.endsWith('.tmp')) return false;
  if (!path.startsWith('_versions/')) return true;
  const m = /^_versions\/(\d+)\.manifest$/.exec(path);
  if (!m) return false;
  const n = BigInt(m[1]!);
  // LanceDB's V2 naming stores u64::MAX − version, so that listing in name order finds the latest first.
  return n === BigInt(version) || (n > 1n << 63n && U64_MAX - n === BigInt(version));
}
